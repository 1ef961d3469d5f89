/**
 * Runs the mock Anthropic upstream as its own process (used by the benchmark):
 *
 *   node dist/test/mock-upstreams/anthropic-upstream-server.js [--port N] [--api-key K]
 *        [--chunk-delay-ms N] [--response-delay-ms N] [--exit-on-stdin-close]
 *
 * Environment equivalents: MOCK_ANTHROPIC_UPSTREAM_PORT, MOCK_ANTHROPIC_UPSTREAM_API_KEY,
 * MOCK_ANTHROPIC_UPSTREAM_CHUNK_DELAY_MS, MOCK_ANTHROPIC_UPSTREAM_RESPONSE_DELAY_MS. Prints
 * `LISTENING <base url>` on stdout once ready (http://127.0.0.1:PORT, without /v1: the Messages API is at
 * <base url>/v1/messages, and an `anthropic` channel's base_url is this URL) and exits on SIGINT/SIGTERM
 * (and, with --exit-on-stdin-close, when its parent closes stdin).
 * Requests are not recorded in this mode (memory stays flat under load).
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startMockAnthropicUpstream } from '../support/mock-anthropic-upstream.js';

/** Absolute path of this module (compiled: dist/test/mock-upstreams/anthropic-upstream-server.js). */
export const MOCK_ANTHROPIC_UPSTREAM_SERVER_ENTRY: string = fileURLToPath(import.meta.url);

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

export async function runMockAnthropicUpstreamServer(argv: string[] = process.argv.slice(2)): Promise<void> {
  const mock = await startMockAnthropicUpstream({
    port: intOption(argv, '--port', 'MOCK_ANTHROPIC_UPSTREAM_PORT', 0),
    apiKey: argValue(argv, '--api-key') ?? process.env.MOCK_ANTHROPIC_UPSTREAM_API_KEY ?? 'sk-ant-upstream-test',
    chunkDelayMs: intOption(argv, '--chunk-delay-ms', 'MOCK_ANTHROPIC_UPSTREAM_CHUNK_DELAY_MS', 0),
    responseDelayMs: intOption(argv, '--response-delay-ms', 'MOCK_ANTHROPIC_UPSTREAM_RESPONSE_DELAY_MS', 0),
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
  runMockAnthropicUpstreamServer().catch((err: unknown) => {
    process.stderr.write(`mock Anthropic upstream failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
