import type { ChatRequest } from '../../ir/chat-request.js';
import { buildGenerateContentBody, type GeminiChannelSettings } from './build-generate-content-body.js';
import { isJsonObject, parseJson, type JsonObject } from '../../wire/gemini/gemini-wire.js';
import { unreadableUpstreamBody } from './parse-response.js';

/**
 * `:countTokens` body. The Gemini API counts either bare `contents` or a whole `generateContentRequest` (which
 * must name the model), never both; the latter is needed as soon as a system instruction or tools count too.
 */
export function buildCountTokensBody(request: ChatRequest, upstreamModel: string, modelResource: string, settings: GeminiChannelSettings): JsonObject {
  const generateContent = buildGenerateContentBody(request, upstreamModel, settings, []);
  if (generateContent.systemInstruction === undefined && generateContent.tools === undefined) return { contents: generateContent.contents };
  const { generationConfig: _generationConfig, ...counted } = generateContent;
  return { generateContentRequest: { model: modelResource, ...counted } };
}

/** `{totalTokens}`; Google leaves the field out when the count is 0. */
export function parseCountTokensBody(body: Buffer): number {
  const parsed = parseJson(body.toString('utf8'));
  if (!isJsonObject(parsed)) throw unreadableUpstreamBody();
  return typeof parsed.totalTokens === 'number' ? parsed.totalTokens : 0;
}
