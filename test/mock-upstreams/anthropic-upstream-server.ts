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
import { fileURLToPath } from 'node:url';
import { startMockAnthropicUpstream } from '../support/mock-anthropic-upstream.js';
import { runIfMain, type MockServerDefinition } from './mock-server-process.js';

/** Absolute path of this module (compiled under dist/test/mock-upstreams/). */
export const MOCK_ANTHROPIC_UPSTREAM_SERVER_ENTRY: string = fileURLToPath(import.meta.url);

const definition: MockServerDefinition = {
  name: 'mock Anthropic upstream',
  envPrefix: 'MOCK_ANTHROPIC_UPSTREAM',
  defaultApiKey: 'sk-ant-upstream-test',
  start: (options) => startMockAnthropicUpstream(options),
};

runIfMain(import.meta.url, definition);
