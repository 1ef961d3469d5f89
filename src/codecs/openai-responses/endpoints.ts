import { once, type ChatEndpoint, type CountTokensEndpoint } from '../family-route.js';
import { decodeResponsesRequest, validateResponsesRequest } from './decode-request.js';
import { openAIResponsesCodec } from './index.js';
import { responsesWire } from '../../wire/responses/wire.js';
import { hostedToolOfferOfResponsesBody, needsOfResponsesBody } from './request-needs.js';

/**
 * POST /v1/responses (OpenAI Responses API), in the chat operation: OpenAI channels get the caller's body untouched;
 * every other channel type gets it translated through the canonical request, with the Responses event sequence
 * rebuilt on the way back. Requests that need OpenAI's stored state or built-in tools go only to channels serving
 * the Responses API natively.
 */
export const openAIResponsesEndpoint: ChatEndpoint = {
  protocol: 'openai-responses',
  wire: responsesWire,
  readEnvelope(_request, body, added) {
    const envelope = validateResponsesRequest(body);
    return {
      codec: openAIResponsesCodec(body, added),
      model: envelope.model,
      stream: envelope.stream,
      maxOutputTokens: envelope.maxOutputTokens,
      promptTokensEstimate: envelope.promptTokensEstimate,
      needs: needsOfResponsesBody(body),
      hostedTools: hostedToolOfferOfResponsesBody(body),
      chat: once(() => decodeResponsesRequest(body)),
      // An answer can depend on state OpenAI stores (previous_response_id, conversation), which the key cannot see.
      cacheable: false,
      nativeOnly: envelope.nativeOnly,
    };
  },
};

/**
 * POST /v1/responses/input_tokens: OpenAI channels count the caller's body themselves (`previous_response_id` and
 * `conversation` only there); every other channel counts the translated request, or the local tokenizer does.
 */
export const responsesInputTokensEndpoint: CountTokensEndpoint = {
  wire: responsesWire,
  decode: (_request, body) => {
    const envelope = validateResponsesRequest(body);
    if (envelope.nativeOnly !== null) return { model: envelope.model, chat: null, nativeOnly: envelope.nativeOnly };
    return { model: envelope.model, chat: decodeResponsesRequest(body) };
  },
  encode: (count) => JSON.stringify({ object: 'response.input_tokens', input_tokens: count.inputTokens }),
};
