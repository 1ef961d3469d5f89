/**
 * Runs one mock upstream as its own process (the benchmark's children): reads `--port`, `--api-key`,
 * `--chunk-delay-ms`, `--response-delay-ms` (or `<ENV_PREFIX>_PORT`, `_API_KEY`, `_CHUNK_DELAY_MS`,
 * `_RESPONSE_DELAY_MS`), prints `LISTENING <url>` once ready, and exits on SIGINT/SIGTERM or, with
 * `--exit-on-stdin-close`, when its parent closes stdin. Requests are not recorded (memory stays flat under load).
 */
import { pathToFileURL } from 'node:url';

export interface MockServerOptions {
  port: number;
  apiKey: string;
  chunkDelayMs: number;
  responseDelayMs: number;
  recordRequests: false;
}

export interface MockServerDefinition {
  /** For messages: "mock Anthropic upstream". */
  name: string;
  envPrefix: string;
  defaultApiKey: string;
  start(options: MockServerOptions): Promise<{ url: string; close(): Promise<void> }>;
}

function argValue(argv: string[], name: string): string | undefined {
  const index = argv.indexOf(name);
  if (index >= 0) return argv[index + 1];
  return argv.find((entry) => entry.startsWith(`${name}=`))?.slice(name.length + 1);
}

function intOption(argv: string[], flag: string, env: string, fallback: number): number {
  const raw = argValue(argv, flag) ?? process.env[env];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${flag}: expected a non-negative integer, got ${raw}`);
  return value;
}

export async function runMockServerProcess(definition: MockServerDefinition, argv: string[] = process.argv.slice(2)): Promise<void> {
  const prefix = definition.envPrefix;
  const mock = await definition.start({
    port: intOption(argv, '--port', `${prefix}_PORT`, 0),
    apiKey: argValue(argv, '--api-key') ?? process.env[`${prefix}_API_KEY`] ?? definition.defaultApiKey,
    chunkDelayMs: intOption(argv, '--chunk-delay-ms', `${prefix}_CHUNK_DELAY_MS`, 0),
    responseDelayMs: intOption(argv, '--response-delay-ms', `${prefix}_RESPONSE_DELAY_MS`, 0),
    recordRequests: false,
  });
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(0), 2000).unref();
    void mock.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  if (argv.includes('--exit-on-stdin-close')) {
    process.stdin.on('end', stop);
    process.stdin.on('close', stop);
    process.stdin.on('error', stop);
    process.stdin.resume();
  }
  process.stdout.write(`LISTENING ${mock.url}\n`);
}

/** Starts the process when `moduleUrl` is the script node was asked to run. */
export function runIfMain(moduleUrl: string, definition: MockServerDefinition): void {
  if (process.argv[1] === undefined || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  runMockServerProcess(definition).catch((error: unknown) => {
    process.stderr.write(`${definition.name} failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  });
}
