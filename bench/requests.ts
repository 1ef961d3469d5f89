/**
 * The requests the benchmark sends, per protocol family, with the check of each answer (autocannon counts a
 * failed check as a mismatch):
 *
 * - OpenAI chat completions (`POST …/chat/completions`, `Authorization: Bearer`): to the mock OpenAI upstream
 *   directly and to the gateway, for `bench-model` (OpenAI channel) and `bench-claude` (Anthropic channel, so
 *   the gateway translates OpenAI → Anthropic → OpenAI).
 * - Anthropic messages (`POST …/v1/messages`, `x-api-key`, `anthropic-version`): to the mock Anthropic upstream
 *   directly, with the same system and user text, i.e. about what the gateway sends upstream for `bench-claude`.
 */

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
export const ANTHROPIC_UPSTREAM_MODEL = 'claude-sonnet-4-5';

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
