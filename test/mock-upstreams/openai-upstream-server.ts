/**
 * Runs the mock OpenAI upstream as its own process (used by the benchmark):
 *
 *   node dist/test/mock-upstreams/openai-upstream-server.js [--port N] [--api-key K]
 *        [--chunk-delay-ms N] [--response-delay-ms N] [--exit-on-stdin-close]
 *
 * Environment equivalents: MOCK_UPSTREAM_PORT, MOCK_UPSTREAM_API_KEY, MOCK_UPSTREAM_CHUNK_DELAY_MS,
 * MOCK_UPSTREAM_RESPONSE_DELAY_MS. Prints `LISTENING <url incl. /v1>` on stdout once ready and exits
 * on SIGINT/SIGTERM (and, with --exit-on-stdin-close, when its parent closes stdin).
 * Requests are not recorded in this mode (memory stays flat under load).
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startMockOpenAIUpstream } from '../support/mock-openai-upstream.js';

/** Absolute path of this module (compiled: dist/test/mock-upstreams/openai-upstream-server.js). */
export const MOCK_UPSTREAM_SERVER_ENTRY: string = fileURLToPath(import.meta.url);

function argValue(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  if (i >= 0) return argv[i + 1];
  const prefixed = argv.find((a) => a.startsWith(`${name}=`));
  return prefixed?.slice(name.length + 1);
}

function intOption(argv: string[], flag: string, env: string, fallback: number): number {
  const raw = argValue(argv, flag) ?? process.env[env];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${flag}: expected a non-negative integer, got ${raw}`);
  return n;
}

export async function runMockUpstreamServer(argv: string[] = process.argv.slice(2)): Promise<void> {
  const mock = await startMockOpenAIUpstream({
    port: intOption(argv, '--port', 'MOCK_UPSTREAM_PORT', 0),
    apiKey: argValue(argv, '--api-key') ?? process.env.MOCK_UPSTREAM_API_KEY ?? 'sk-upstream-test',
    chunkDelayMs: intOption(argv, '--chunk-delay-ms', 'MOCK_UPSTREAM_CHUNK_DELAY_MS', 0),
    responseDelayMs: intOption(argv, '--response-delay-ms', 'MOCK_UPSTREAM_RESPONSE_DELAY_MS', 0),
    recordRequests: false,
  });
  let stopping = false;
  const stop = (): void => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(0), 2000);
    force.unref();
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

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  runMockUpstreamServer().catch((err: unknown) => {
    process.stderr.write(`mock upstream failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
