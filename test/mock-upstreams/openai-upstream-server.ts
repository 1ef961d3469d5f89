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
import { fileURLToPath } from 'node:url';
import { startMockOpenAIUpstream } from '../support/mock-openai-upstream.js';
import { runIfMain, type MockServerDefinition } from './mock-server-process.js';

/** Absolute path of this module (compiled under dist/test/mock-upstreams/). */
export const MOCK_UPSTREAM_SERVER_ENTRY: string = fileURLToPath(import.meta.url);

const definition: MockServerDefinition = {
  name: 'mock upstream',
  envPrefix: 'MOCK_UPSTREAM',
  defaultApiKey: 'sk-upstream-test',
  start: (options) => startMockOpenAIUpstream(options),
};

runIfMain(import.meta.url, definition);
