import { withFields } from '../../shared/with-fields.js';
import { bodyNamingModel, bytesNamingModel } from '../pass-through-body.js';
import { SAME_ROUTES, type ClientWire, type Wire } from '../wire.js';

/** What asks an OpenAI chat stream for its closing usage chunk (`stream_options.include_usage`). */
export const STREAM_USAGE_OPTIONS = { include_usage: true } as const;

/** Whether an OpenAI chat body asks for the stream's usage chunk. */
export function asksStreamUsage(body: Record<string, unknown>): boolean {
  const options = body.stream_options;
  return typeof options === 'object' && options !== null && (options as { include_usage?: unknown }).include_usage === true;
}

/** A streamed chat body that asks for the usage chunk, keeping the caller's other stream options. */
function withStreamUsage(body: Record<string, unknown>, upstreamModel: string): string {
  const options = typeof body.stream_options === 'object' && body.stream_options !== null ? body.stream_options : {};
  return JSON.stringify(withFields(body, { model: upstreamModel, stream_options: withFields(options, STREAM_USAGE_OPTIONS) }));
}

/**
 * OpenAI's API as upstreams speak it and chat-completions clients send it (`openai-chat`): paths under the channel's
 * `/v1` base. A stream is marked by `stream: true` in the body and always asks for its usage chunk (dropped again on
 * the way back when the caller did not ask for it). The Responses API's paths are here too: the Responses wire is
 * served on OpenAI's upstreams. OpenAI has no token counter for chat completions.
 */
export const openAIWire: Wire<string> & ClientWire = {
  name: 'openai-chat',
  get servedOn(): Wire {
    return openAIWire;
  },
  passThrough: {
    chat: () => '/chat/completions',
    'count-tokens': null,
    embeddings: () => '/embeddings',
    responses: () => '/responses',
    'responses-input-tokens': () => '/responses/input_tokens',
  },
  passThroughRoutes: { chat: SAME_ROUTES.chat, 'count-tokens': null, embeddings: SAME_ROUTES.embeddings },
  passThroughBody: (body, upstreamModel, stream, bytes) => {
    // A stream's body is sent as it came only when it asks for the usage chunk already.
    const untouched = stream && !asksStreamUsage(body) ? null : bytesNamingModel(body, bytes, upstreamModel);
    return untouched ?? (stream ? withStreamUsage(body, upstreamModel) : bodyNamingModel(body, upstreamModel));
  },
  answerModelField: 'model',
  gatewayFields: ['models', 'provider'],
};
