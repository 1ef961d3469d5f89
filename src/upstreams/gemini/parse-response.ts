import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../errors/gateway-error.js';
import type { ChatRequest } from '../../ir/chat-request.js';
import type { ChatResponse } from '../../ir/chat-response.js';
import type { FinishReason } from '../../ir/finish-reason.js';
import type { ContentPart, TextPart, ToolCallPart } from '../../ir/message.js';
import { citationsByBlock, groundingOf } from './grounding.js';
import { emptyUsage } from '../../ir/usage.js';
import { isJsonObject, parseJson, type JsonObject } from '../../wire/gemini/gemini-wire.js';
import { blockedPromptFinishReason, mapGeminiFinishReason } from '../../wire/gemini/finish-reason.js';
import { addGroundingQueries, usageFromGemini as usageFromUsageMetadata, withGroundingSearches } from '../../wire/gemini/usage.js';

/** An id for a function call the Gemini API sent without one (most models leave `functionCall.id` out). */
export function newToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

export function newResponseId(): string {
  return `gen-${randomBytes(12).toString('hex')}`;
}

export function unreadableUpstreamBody(): GatewayError {
  return new GatewayError('upstream_error', 'The upstream provider sent a response the gateway could not read.');
}

/** The first candidate (the gateway asks for one) of a `GenerateContentResponse`, or null. */
export function firstCandidate(response: JsonObject): JsonObject | null {
  const candidates = response.candidates;
  if (!Array.isArray(candidates)) return null;
  const candidate: unknown = candidates[0];
  return isJsonObject(candidate) ? candidate : null;
}

export function partsOf(candidate: JsonObject | null): JsonObject[] {
  const content = candidate?.content;
  if (!isJsonObject(content) || !Array.isArray(content.parts)) return [];
  return content.parts.filter(isJsonObject);
}

/** The finish reason of a whole answer or of a stream's last chunk; null while there is none. */
export function finishReasonOf(response: JsonObject, candidate: JsonObject | null, hasToolCalls: boolean): FinishReason | null {
  if (candidate !== null && typeof candidate.finishReason === 'string') return mapGeminiFinishReason(candidate.finishReason, hasToolCalls);
  const feedback = response.promptFeedback;
  if (candidate === null && isJsonObject(feedback) && typeof feedback.blockReason === 'string') return blockedPromptFinishReason(feedback.blockReason);
  return null;
}

/**
 * A `generateContent` body → the canonical answer: text parts (thoughts as reasoning), function calls with their
 * arguments as JSON text (an id generated when Gemini gives none), media as images or files; signatures kept on the
 * parts they came with. Built-in tool parts (executableCode, codeExecutionResult) are dropped with a warning.
 */
export function parseGenerateContentResponse(body: Buffer, request: ChatRequest): ChatResponse {
  const response = parseJson(body.toString('utf8'));
  if (!isJsonObject(response)) throw unreadableUpstreamBody();
  const candidate = firstCandidate(response);
  const warnings: string[] = [];
  const content: ContentPart[] = [];
  for (const part of partsOf(candidate)) {
    const decoded = contentPart(part);
    if (decoded === null) warnings.push(`a Gemini part (${Object.keys(part).join(', ')}) has no canonical form and was dropped.`);
    else if (!signsFirstCall(decoded, content)) content.push(decoded);
  }
  const grounding = groundingOf(candidate);
  if (grounding !== null) {
    const texts = content.filter((part): part is TextPart => part.type === 'text');
    citationsByBlock(texts.map((part) => part.text), grounding.supports).forEach((citations, index) => {
      if (citations.length > 0) (texts[index] as TextPart).citations = citations;
    });
    content.unshift(...grounding.searches);
  }
  const hasToolCalls = content.some((part) => part.type === 'tool-call');
  const searchQueries = new Set<string>();
  addGroundingQueries(response, searchQueries);
  return {
    id: typeof response.responseId === 'string' && response.responseId !== '' ? response.responseId : newResponseId(),
    model: request.model,
    created: Math.floor(Date.now() / 1000),
    content,
    finishReason: finishReasonOf(response, candidate, hasToolCalls) ?? mapGeminiFinishReason(null, hasToolCalls),
    usage: withGroundingSearches(usageFromUsageMetadata(response.usageMetadata) ?? emptyUsage(), searchQueries),
    warnings,
  };
}

/**
 * An empty text part that carries only a signature, right after the step's function calls, signs the first of them
 * when that one came without its own (Gemini 3 wants a step's signature back on its first call).
 */
function signsFirstCall(part: ContentPart, content: ContentPart[]): boolean {
  if (part.type !== 'text' || part.text !== '' || part.signature === undefined || content.at(-1)?.type !== 'tool-call') return false;
  let first = content.length - 1;
  while (content[first - 1]?.type === 'tool-call') first -= 1;
  const call = content[first] as ToolCallPart;
  if (call.signature !== undefined) return false;
  content[first] = { ...call, signature: part.signature };
  return true;
}

function contentPart(part: JsonObject): ContentPart | null {
  const signature = typeof part.thoughtSignature === 'string' ? part.thoughtSignature : undefined;
  if (typeof part.text === 'string') {
    if (part.thought === true) return signature === undefined ? { type: 'reasoning', text: part.text } : { type: 'reasoning', text: part.text, signature };
    return signature === undefined ? { type: 'text', text: part.text } : { type: 'text', text: part.text, signature };
  }
  const call = part.functionCall;
  if (isJsonObject(call) && typeof call.name === 'string') {
    const id = typeof call.id === 'string' && call.id !== '' ? call.id : newToolCallId();
    const parsed = { type: 'tool-call' as const, id, name: call.name, argumentsJson: JSON.stringify(isJsonObject(call.args) ? call.args : {}) };
    return signature === undefined ? parsed : { ...parsed, signature };
  }
  const inline = part.inlineData;
  if (isJsonObject(inline) && typeof inline.mimeType === 'string' && typeof inline.data === 'string') {
    const source = { kind: 'base64' as const, mediaType: inline.mimeType, data: inline.data };
    return inline.mimeType.startsWith('image/') ? { type: 'image', source } : { type: 'file', source };
  }
  const file = part.fileData;
  if (isJsonObject(file) && typeof file.fileUri === 'string') {
    const mediaType = typeof file.mimeType === 'string' ? file.mimeType : undefined;
    const source = mediaType === undefined ? { kind: 'url' as const, url: file.fileUri } : { kind: 'url' as const, url: file.fileUri, mediaType };
    return mediaType?.startsWith('image/') === true ? { type: 'image', source } : { type: 'file', source };
  }
  return null;
}
