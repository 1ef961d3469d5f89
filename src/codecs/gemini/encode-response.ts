import type { ChatResponse } from '../../ir/chat-response.js';
import { encodeModelParts } from './encode-parts.js';
import { encodeGeminiUsage } from '../../wire/gemini/usage.js';
import type { GeminiCandidate, GeminiGenerateContentResponse } from '../../wire/gemini/gemini-wire.js';
import { toGeminiFinishReason } from '../../wire/gemini/finish-reason.js';

/**
 * A canonical answer → Gemini's `GenerateContentResponse`: one candidate with the model's parts, its finish reason
 * and index 0, `usageMetadata`, `modelVersion` (the public model the caller asked for) and `responseId`.
 */
export function encodeGeminiResponse(response: ChatResponse, model: string): string {
  const parts = encodeModelParts(response.content);
  const candidate: GeminiCandidate = {
    content: parts.length === 0 ? { role: 'model' } : { parts, role: 'model' },
    finishReason: toGeminiFinishReason(response.finishReason),
    index: 0,
  };
  const body: GeminiGenerateContentResponse = {
    candidates: [candidate],
    usageMetadata: encodeGeminiUsage(response.usage),
    modelVersion: model,
    responseId: response.id,
  };
  return JSON.stringify(body);
}
