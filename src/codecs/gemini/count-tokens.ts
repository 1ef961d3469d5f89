import type { ChatRequest } from '../../ir/chat-request.js';
import type { TokenCount } from '../../ir/token-count.js';
import { decodeGeminiRequest } from './decode-request.js';
import { isJsonObject, readField } from '../../wire/gemini/gemini-wire.js';
import { invalidArgument } from './invalid-argument.js';

/**
 * `:countTokens` body → the canonical request to count. Google takes either `{contents}` or
 * `{generateContentRequest: {model, contents, systemInstruction?, tools?, …}}`, never both.
 */
export function decodeGeminiCountTokensRequest(body: Record<string, unknown>, hints: { pathModel?: string }): ChatRequest {
  const nested = readField(body, 'generateContentRequest');
  const contents = readField(body, 'contents');
  if (nested !== undefined && nested !== null) {
    if (contents !== undefined && contents !== null) {
      throw invalidArgument('generateContentRequest', "'contents' and 'generateContentRequest' are mutually exclusive.");
    }
    if (!isJsonObject(nested)) throw invalidArgument('generateContentRequest', "'generateContentRequest' must be an object.");
    return decodeGeminiRequest(nested, { ...hints, stream: false });
  }
  return decodeGeminiRequest({ contents }, { ...hints, stream: false });
}

/** `:countTokens` answer: `{totalTokens}`. */
export function encodeGeminiCountTokensResponse(count: TokenCount): string {
  return JSON.stringify({ totalTokens: count.inputTokens });
}
