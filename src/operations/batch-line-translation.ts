import { decodeOpenAIChatRequest } from '../codecs/openai-chat/decode-request.js';
import { encodeOpenAIChatResponse } from '../codecs/openai-chat/encode-response.js';
import type { LineTranslation } from '../domain/provider-batches.js';
import { anthropicBodyOptions } from '../upstreams/anthropic/anthropic-adapter.js';
import { buildAnthropicBody } from '../upstreams/anthropic/build-request-body.js';
import { parseAnthropicResponse } from '../upstreams/anthropic/parse-response.js';
import type { JsonObject } from '../wire/json-object.js';

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/**
 * OpenAI chat-completions lines on Anthropic's Message Batches: each request translated as any chat request to Claude
 * is (system messages hoisted, max_tokens defaulted, what Anthropic cannot take changed or dropped), each answer back
 * as a chat completion, an error as OpenAI's error object.
 */
export const chatLinesToAnthropic: LineTranslation = {
  toProvider(body, channel, upstreamModel) {
    const request = decodeOpenAIChatRequest(body as JsonObject, { stream: false });
    return { ...buildAnthropicBody(request, anthropicBodyOptions(channel, upstreamModel, request.model)) } as Record<string, unknown>;
  },
  fromProvider(answer, model) {
    if (answer.status < 400) {
      const encoded = encodeOpenAIChatResponse(parseAnthropicResponse(Buffer.from(JSON.stringify(answer.body))), model);
      return { ...answer, body: JSON.parse(encoded) as unknown };
    }
    // Anthropic's error response as OpenAI's error object.
    const inner = isObject(answer.body) && isObject(answer.body.error) ? answer.body.error : {};
    const message = typeof inner.message === 'string' ? inner.message : 'The request failed.';
    return { ...answer, body: { error: { message, type: typeof inner.type === 'string' ? inner.type : 'upstream_error', param: null, code: null } } };
  },
};
