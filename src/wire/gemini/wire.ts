import { untouchedBytes } from '../pass-through-body.js';
import { SAME_ROUTES, type ClientWire, type Wire } from '../wire.js';

export type GeminiMethod = 'generateContent' | 'streamGenerateContent' | 'countTokens' | 'embedContent' | 'batchEmbedContents';

/**
 * The query a Gemini method is called with (on Google's Gemini API and Vertex AI alike): a stream is marked by its method (`streamGenerateContent`) and asked for
 * as Server-Sent Events (`alt=sse`: clean event boundaries, whose last event carries the final usage).
 */
export function geminiMethodQuery(method: string): string {
  return method === 'streamGenerateContent' ? '?alt=sse' : '';
}

/**
 * Google's Gemini API (`gemini`): the model and the operation travel in the URL (`models/{model}:{method}`), so the
 * caller's body goes as it came; an answer names its model in `modelVersion`.
 */
export const geminiWire: Wire<GeminiMethod> & ClientWire = {
  name: 'gemini',
  get servedOn(): Wire {
    return geminiWire;
  },
  passThrough: {
    chat: (operation) => (operation.stream ? 'streamGenerateContent' : 'generateContent'),
    'count-tokens': () => 'countTokens',
    embeddings: (operation) => (operation.batch ? 'batchEmbedContents' : 'embedContent'),
    responses: null,
    'responses-input-tokens': null,
  },
  passThroughRoutes: { chat: SAME_ROUTES.chat, 'count-tokens': SAME_ROUTES.countTokens, embeddings: SAME_ROUTES.embeddings },
  passThroughBody: (body, _upstreamModel, _stream, bytes) => untouchedBytes(body, bytes, null) ?? JSON.stringify(body),
  answerModelField: 'modelVersion',
  gatewayFields: [],
};
