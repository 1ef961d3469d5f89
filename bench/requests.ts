/**
 * The requests the benchmark sends, per protocol family, with the check of each answer (autocannon counts a
 * failed check as a mismatch):
 *
 * - OpenAI chat completions (`POST …/chat/completions`, `Authorization: Bearer`): to the mock OpenAI upstream
 *   directly and to the gateway, for `bench-model` (OpenAI channel) and `bench-claude` (Anthropic channel, so
 *   the gateway translates OpenAI → Anthropic → OpenAI).
 * - Anthropic messages (`POST …/v1/messages`, `x-api-key`, `anthropic-version`): to the mock Anthropic upstream
 *   directly, with the same system and user text, i.e. about what the gateway sends upstream for `bench-claude`.
 * - Claude Code's recorded tool-loop request (agent-sized, Anthropic messages): to the mock Anthropic upstream
 *   directly and to the gateway for `bench-claude` (passed through), `bench-model` (OpenAI) and `bench-gemini` (Gemini).
 */

import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { signThinking } from '../test/support/mock-anthropic-upstream.js';

/** Key the mock OpenAI upstream expects (the gateway's `openai` channel uses it too). */
export const UPSTREAM_KEY = 'sk-upstream-test';
/** Key the mock Anthropic upstream expects (the gateway's `anthropic` channel uses it too). */
export const ANTHROPIC_UPSTREAM_KEY = 'sk-ant-upstream-test';
export const ANTHROPIC_VERSION = '2023-06-01';
/** Public model of the gateway served by the OpenAI channel. */
export const BENCH_MODEL = 'bench-model';
/** Public model of the gateway served by the slow OpenAI channel (the slow-streams scenario). */
export const BENCH_SLOW_MODEL = 'bench-slow';
/** Public model of the gateway served by the Anthropic channel. */
export const BENCH_CLAUDE_MODEL = 'bench-claude';
/** What `bench-claude` maps to on the Anthropic channel (and what the direct Anthropic requests ask for). */
export const ANTHROPIC_UPSTREAM_MODEL = 'claude-opus-4-8';
/** Public model of the gateway served by the Gemini channel (the agent-sized scenario translated to Gemini). */
export const BENCH_GEMINI_MODEL = 'bench-gemini';
/** What `bench-gemini` maps to on the Gemini channel. */
export const GEMINI_UPSTREAM_MODEL = 'gemini-2.5-flash';
/** Key the mock Gemini upstream expects. */
export const GEMINI_UPSTREAM_KEY = 'gemini-upstream-test';

const SYSTEM_TEXT = 'You are a benchmark assistant. Answer briefly.';
const USER_TEXT = 'Give me one short sentence about the latency and throughput of model gateways.';
const MAX_TOKENS = 64;

const MESSAGES = [
  { role: 'system', content: SYSTEM_TEXT },
  { role: 'user', content: USER_TEXT },
];

/** One kind of request to one endpoint, and the check of its 2xx answers. */
export interface RequestSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
  verify: (body: string) => boolean;
  /** A string every good answer holds: wrk's per-response check (its Lua cannot run `verify`). */
  marker: string;
}

export const verifyOpenAIJson = (body: string): boolean => /"object"\s*:\s*"chat\.completion"/.test(body) && body.includes('"choices"');
export const verifyOpenAIStream = (body: string): boolean => body.includes('chat.completion.chunk') && /data: ?\[DONE\]/.test(body);
export const verifyAnthropicJson = (body: string): boolean => /"type"\s*:\s*"message"/.test(body) && body.includes('"content"');
/** Anthropic SSE: deltas, then the closing `message_stop` event. */
export const verifyAnthropicStream = (body: string): boolean => body.includes('event: content_block_delta') && /event: ?message_stop\r?\ndata: /.test(body);

/** OpenAI chat completion (with include_usage when streaming). */
export function openAIChatRequest(url: string, apiKey: string, model: string, stream: boolean): RequestSpec {
  return {
    url,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      messages: MESSAGES,
      max_tokens: MAX_TOKENS,
      ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}),
    }),
    verify: stream ? verifyOpenAIStream : verifyOpenAIJson,
    marker: stream ? '[DONE]' : 'chat.completion"',
  };
}

/** Anthropic Messages request with the same system and user text as the OpenAI one. */
export function anthropicMessagesRequest(url: string, apiKey: string, model: string, stream: boolean): RequestSpec {
  return {
    url,
    headers: { 'x-api-key': apiKey, 'anthropic-version': ANTHROPIC_VERSION, 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      max_tokens: MAX_TOKENS,
      system: SYSTEM_TEXT,
      messages: [{ role: 'user', content: USER_TEXT }],
      ...(stream ? { stream: true } : {}),
    }),
    verify: stream ? verifyAnthropicStream : verifyAnthropicJson,
    marker: stream ? 'message_stop' : '"content"',
  };
}

/**
 * The agent-sized request: Claude Code's recorded tool-loop turn (about 20 KB: its system prompt, a dozen tools with
 * their JSON schemas, a thinking block, a tool call and its result), as Claude Code sends it (`POST
 * /v1/messages?beta=true` with its beta and version headers), its model and key replaced and `stream` as asked.
 * The recorded thinking block is signed as the mock Anthropic upstream checks it, so the same body is valid there.
 */
export function agentAnthropicRequest(url: string, apiKey: string, model: string, stream: boolean): RequestSpec {
  const fixture = claudeCodeToolLoop();
  const messages = (fixture.body.messages as Array<{ role: string; content: unknown }>).map((message) => {
    if (!Array.isArray(message.content)) return message;
    const content = (message.content as Array<{ type: string; thinking?: string }>).map((block) => (block.type === 'thinking' ? { ...block, signature: signThinking(block.thinking ?? '') } : block));
    return { ...message, content };
  });
  const headers: Record<string, string> = { ...fixture.headers, 'content-type': 'application/json', 'x-api-key': apiKey };
  return {
    url: `${url}${fixture.path.slice(fixture.path.indexOf('?'))}`,
    headers,
    body: JSON.stringify({ ...fixture.body, messages, model, stream }),
    verify: stream ? verifyAnthropicStream : verifyAnthropicJson,
    marker: stream ? 'message_stop' : '"content"',
  };
}

// Compiled to dist/bench/: the fixtures stay in the source tree's test/ (two levels up from here).
const CLAUDE_CODE_TOOL_LOOP = fileURLToPath(new URL('../../test/e2e/agents/__fixtures__/claude-code-tool-loop.json', import.meta.url));

/** Whether this tree holds the recorded request (an installed package or image may leave test/ out). */
export function agentRequestAvailable(): boolean {
  return existsSync(CLAUDE_CODE_TOOL_LOOP);
}

/** The recorded Claude Code request the agent-sized scenarios send (test/e2e/agents/__fixtures__). */
function claudeCodeToolLoop(): { path: string; headers: Record<string, string>; body: Record<string, unknown> } {
  return JSON.parse(readFileSync(CLAUDE_CODE_TOOL_LOOP, 'utf8')) as { path: string; headers: Record<string, string>; body: Record<string, unknown> };
}
