import type { ChatRequest } from '../../ir/chat-request.js';
import type { TokenCount } from '../../ir/token-count.js';
import { decodeAnthropicRequest } from './decode-request.js';

/** Larger than any model's output cap; stands in for the max_tokens a count_tokens body does not carry. */
const NO_OUTPUT_CAP = Number.MAX_SAFE_INTEGER;

/**
 * POST /v1/messages/count_tokens → the canonical request it describes (validated like a messages body, without
 * `max_tokens`), for counting on an upstream of another protocol or locally. ClientCodec has no member for
 * this, so the route imports it from here.
 */
export function decodeAnthropicCountTokensRequest(body: Record<string, unknown>): ChatRequest {
  const withCap = body.max_tokens === undefined ? { ...body, max_tokens: NO_OUTPUT_CAP } : body;
  const request = decodeAnthropicRequest(withCap, { stream: false });
  delete request.maxOutputTokens;
  return request;
}

/** Anthropic's count_tokens answer: `{"input_tokens": N}`. */
export function encodeAnthropicCountTokensResponse(count: TokenCount | number): string {
  return JSON.stringify({ input_tokens: typeof count === 'number' ? count : count.inputTokens });
}
