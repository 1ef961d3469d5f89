/**
 * Runs the mock Gemini upstream as its own process (used by the benchmark):
 *
 *   node dist/test/mock-upstreams/gemini-upstream-server.js [--port N] [--api-key K]
 *        [--chunk-delay-ms N] [--response-delay-ms N] [--exit-on-stdin-close]
 *
 * Environment equivalents: MOCK_GEMINI_UPSTREAM_PORT, MOCK_GEMINI_UPSTREAM_API_KEY,
 * MOCK_GEMINI_UPSTREAM_CHUNK_DELAY_MS, MOCK_GEMINI_UPSTREAM_RESPONSE_DELAY_MS. Prints `LISTENING <base url>` on
 * stdout once ready (a `gemini` channel's base_url is this URL) and exits on SIGINT/SIGTERM (and, with
 * --exit-on-stdin-close, when its parent closes stdin). Requests are not recorded in this mode.
 */
import { fileURLToPath } from 'node:url';
import { startMockGeminiUpstream } from '../support/mock-gemini-upstream.js';
import { runIfMain, type MockServerDefinition } from './mock-server-process.js';

/** Absolute path of this module (compiled under dist/test/mock-upstreams/). */
export const MOCK_GEMINI_UPSTREAM_SERVER_ENTRY: string = fileURLToPath(import.meta.url);

const definition: MockServerDefinition = {
  name: 'mock Gemini upstream',
  envPrefix: 'MOCK_GEMINI_UPSTREAM',
  defaultApiKey: 'gemini-upstream-test',
  start: (options) => startMockGeminiUpstream(options),
};

runIfMain(import.meta.url, definition);
