/**
 * Deterministic answers of the mock Gemini upstream:
 * - the last user turn is function responses → "Tool results: name=<response JSON> …";
 * - a googleSearch tool and a last user text mentioning "search" → a text answer with groundingMetadata (the last 100
 *   characters of that text as query, n queries for "<n> times", two web sources, the first sentence cited); googleSearch with function
 *   declarations is refused before Gemini 3, as the API does.
 * - tools are declared, mode is not NONE, and the last user text mentions "weather" or `call <name>` (or mode is ANY)
 *   → one function call to the named, else weather-like, else first allowed function with the arguments the text
 *   gives (`call <name> with {…}`), else `{location}` (the word after "in", else Paris) and `unit: "celsius"` when the
 *   schema has a unit;
 * - otherwise "Echo: <last user text>" (as `{"echo": …}` with responseMimeType application/json).
 * Thinking models (2.5 and later, unless thinkingBudget is 0) think "Thinking about "<text>"." and report it in
 * thoughtsTokenCount; the thought is returned as a `thought: true` part only with includeThoughts. Thinking models
 * sign their first function call; Gemini 3 models, and any thinking model asked for its thoughts, also sign their
 * text (in streams: a last empty text part).
 * Tokens are words and punctuation marks; an image counts 258, as Gemini counts it.
 */
import { requestedToolArguments, requestedToolName } from './mock-tool-request.js';
import { createHash } from 'node:crypto';
import type { Declaration, GenerateRequest, MockContent } from './mock-gemini-upstream-validate.js';
import { isObject, type JsonObject, type MockModel } from './mock-gemini-upstream-wire.js';

export const IMAGE_TOKENS = 258;

export function countTokens(text: string): number {
  return text.match(/[A-Za-z0-9]+|[^\sA-Za-z0-9]/g)?.length ?? 0;
}

/** Pieces of text (a word with the whitespace before it) that concatenate back to the text. */
export function splitWords(text: string): string[] {
  return text.match(/\s*\S+|\s+$/g) ?? [];
}

export function contentsTokens(contents: readonly MockContent[]): number {
  let tokens = 0;
  for (const content of contents) {
    for (const part of content.parts) {
      if (part.kind === 'text') tokens += countTokens(part.text);
      else if (part.kind === 'media') tokens += IMAGE_TOKENS;
      else if (part.kind === 'call') tokens += countTokens(`${part.name} ${JSON.stringify(part.args)}`);
      else if (part.kind === 'response') tokens += countTokens(`${part.name} ${JSON.stringify(part.response)}`);
    }
  }
  return tokens;
}

export function promptTokens(request: Pick<GenerateRequest, 'contents' | 'system' | 'toolsJson'>): number {
  const tools = request.toolsJson === 'null' ? 0 : countTokens(request.toolsJson);
  return contentsTokens(request.contents) + countTokens(request.system) + tools;
}

export function signatureFor(seed: string): string {
  return createHash('sha256').update(`mock-gemini-signature:${seed}`).digest('base64');
}

export type PlannedPart = { kind: 'text'; text: string } | { kind: 'call'; name: string; args: JsonObject };

export interface Plan {
  thought: string | null;
  includeThoughts: boolean;
  part: PlannedPart | null;
  finishReason: 'STOP' | 'MAX_TOKENS';
  callSignature?: string;
  textSignature?: string;
  thoughtsTokens: number;
  candidatesTokens: number;
  /** Google Search grounding of the answer (googleSearch tool and a user text mentioning "search"). */
  grounding?: JsonObject;
}

export const MOCK_GROUNDING_SOURCES = [
  { uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/unigate-release', title: 'example.com' },
  { uri: 'https://vertexaisearch.cloud.google.com/grounding-api-redirect/gateway-guide', title: 'example.org' },
];

/**
 * Grounding as Gemini reports it: the queries, the web sources, and which spans of the answer (bytes) cite which.
 * "<n> times" in the text runs n distinct queries, reported as Gemini 3 sometimes does with an empty entry and the
 * first query repeated among them (Google bills distinct non-empty queries).
 */
function groundingFor(query: string, answer: string, text: string): JsonObject {
  const sentence = answer.slice(0, answer.indexOf('.') + 1);
  const asked = Number(/\b(\d+) times\b/i.exec(text)?.[1] ?? 1);
  const queries = Array.from({ length: Math.max(1, asked) }, (_, index) => (index === 0 ? query : `${query} (refined ${index})`));
  return {
    webSearchQueries: queries.length === 1 ? queries : [queries[0], '', ...queries.slice(1), queries[0]],
    searchEntryPoint: { renderedContent: '<div>Search suggestions</div>' },
    groundingChunks: MOCK_GROUNDING_SOURCES.map((web) => ({ web })),
    groundingSupports: [{ segment: { startIndex: 0, endIndex: Buffer.byteLength(sentence), text: sentence }, groundingChunkIndices: [0, 1] }],
  };
}

function lastUserText(contents: readonly MockContent[]): string {
  for (let index = contents.length - 1; index >= 0; index -= 1) {
    const content = contents[index] as MockContent;
    if (content.role !== 'user') continue;
    const texts = content.parts.flatMap((part) => (part.kind === 'text' && !part.thought ? [part.text] : []));
    if (texts.length > 0) return texts.join(' ');
  }
  return '';
}

function weatherCall(request: GenerateRequest, text: string): PlannedPart | null {
  if (request.declarations.length === 0 || request.mode === 'NONE') return null;
  const callable = request.allowed.length > 0 ? request.declarations.filter((d) => request.allowed.includes(d.name)) : request.declarations;
  const named = requestedToolName(text, callable.map((d) => d.name));
  if (request.mode !== 'ANY' && named === undefined && !/weather/i.test(text)) return null;
  const target: Declaration | undefined = callable.find((d) => d.name === named) ?? callable.find((d) => /weather/i.test(d.name)) ?? callable[0];
  if (target === undefined) return null;
  const given = requestedToolArguments(text, target.name);
  if (given !== undefined) return { kind: 'call', name: target.name, args: given as JsonObject };
  const location = /\bin ([A-Z][A-Za-z]+)/.exec(text)?.[1] ?? 'Paris';
  const properties = isObject(target.parameters?.properties) ? target.parameters.properties : {};
  const args: JsonObject = { location };
  if ('unit' in properties) args.unit = 'celsius';
  return { kind: 'call', name: target.name, args };
}

export function planAnswer(request: GenerateRequest, model: MockModel): Plan {
  const last = request.contents[request.contents.length - 1];
  const responses = last?.role === 'user' ? last.parts.flatMap((part) => (part.kind === 'response' ? [part] : [])) : [];
  const text = lastUserText(request.contents);
  const thinks = model.thinking && request.thinkingBudget !== 0;
  const thought = thinks ? `Thinking about "${text.slice(0, 60)}".` : null;
  let part: PlannedPart | null;
  const searches = request.googleSearch && responses.length === 0 && /search/i.test(text);
  if (responses.length > 0) part = { kind: 'text', text: `Tool results: ${responses.map((r) => `${r.name}=${JSON.stringify(r.response)}`).join(' ')}` };
  else if (searches) part = { kind: 'text', text: 'The gateway now maps web search. Its release notes say so.' };
  else part = weatherCall(request, text) ?? { kind: 'text', text: request.responseMimeType === 'application/json' ? JSON.stringify({ echo: text }) : `Echo: ${text}` };
  let finishReason: Plan['finishReason'] = 'STOP';
  if (part.kind === 'text') {
    const cut = cutAtStop(part.text, request.stopSequences);
    const limited = limitTokens(cut, request.maxOutputTokens);
    if (limited !== cut) finishReason = 'MAX_TOKENS';
    part = limited === '' ? null : { kind: 'text', text: limited };
  }
  const plan: Plan = {
    thought,
    includeThoughts: thought !== null && request.includeThoughts,
    part,
    finishReason,
    thoughtsTokens: thought === null ? 0 : countTokens(thought) + 8,
    candidatesTokens: part === null ? 0 : part.kind === 'text' ? countTokens(part.text) : countTokens(`${part.name} ${JSON.stringify(part.args)}`),
  };
  if (searches && part?.kind === 'text') plan.grounding = groundingFor(text.slice(-100).trim(), part.text, text);
  if (part?.kind === 'call' && model.thinking) plan.callSignature = signatureFor(`${model.name}:${part.name}:${JSON.stringify(part.args)}`);
  if (part?.kind === 'text' && (model.requiresSignatures || plan.includeThoughts)) plan.textSignature = signatureFor(`${model.name}:${part.text}`);
  return plan;
}

function cutAtStop(text: string, stops: readonly string[]): string {
  let end = text.length;
  for (const stop of stops) {
    const index = text.indexOf(stop);
    if (index >= 0 && index < end) end = index;
  }
  return text.slice(0, end);
}

function limitTokens(text: string, max: number | undefined): string {
  if (max === undefined || countTokens(text) <= max) return text;
  let result = '';
  for (const word of splitWords(text)) {
    if (countTokens(result + word) > max) break;
    result += word;
  }
  return result;
}

export interface UsageOverride {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

export function usageMetadata(prompt: number, candidates: number, thoughts: number, override: UsageOverride | null, withCandidates = true): JsonObject {
  const values = { promptTokenCount: prompt, candidatesTokenCount: candidates, thoughtsTokenCount: thoughts, ...(override ?? {}) };
  const total = values.promptTokenCount + values.candidatesTokenCount + values.thoughtsTokenCount + (values.toolUsePromptTokenCount ?? 0);
  const usage: JsonObject = { promptTokenCount: values.promptTokenCount };
  if (withCandidates) usage.candidatesTokenCount = values.candidatesTokenCount;
  usage.totalTokenCount = total;
  if (values.cachedContentTokenCount !== undefined) usage.cachedContentTokenCount = values.cachedContentTokenCount;
  usage.promptTokensDetails = [{ modality: 'TEXT', tokenCount: values.promptTokenCount }];
  if (values.toolUsePromptTokenCount !== undefined) usage.toolUsePromptTokenCount = values.toolUsePromptTokenCount;
  if (values.thoughtsTokenCount > 0) usage.thoughtsTokenCount = values.thoughtsTokenCount;
  return usage;
}

export interface AnswerMeta {
  model: string;
  responseId: string;
  prompt: number;
  override: UsageOverride | null;
}

function plannedPart(part: PlannedPart, signature: string | undefined): JsonObject {
  const wire: JsonObject = part.kind === 'text' ? { text: part.text } : { functionCall: { name: part.name, args: part.args } };
  if (signature !== undefined) wire.thoughtSignature = signature;
  return wire;
}

function envelope(meta: AnswerMeta, candidate: JsonObject, usage: JsonObject): JsonObject {
  return { candidates: [candidate], usageMetadata: usage, modelVersion: meta.model, responseId: meta.responseId };
}

export function buildResponse(plan: Plan, meta: AnswerMeta): JsonObject {
  const parts: JsonObject[] = [];
  if (plan.includeThoughts && plan.thought !== null) parts.push({ text: plan.thought, thought: true });
  if (plan.part !== null) parts.push(plannedPart(plan.part, plan.part.kind === 'call' ? plan.callSignature : plan.textSignature));
  const candidate: JsonObject = { ...(parts.length > 0 ? { content: { parts, role: 'model' } } : {}), finishReason: plan.finishReason, index: 0 };
  if (plan.grounding !== undefined) candidate.groundingMetadata = plan.grounding;
  return envelope(meta, candidate, usageMetadata(meta.prompt, plan.candidatesTokens, plan.thoughtsTokens, meta.override));
}

/** The stream: a thought chunk (with includeThoughts), the answer in chunks of 3 words, the finish on the last. */
export function buildChunks(plan: Plan, meta: AnswerMeta): JsonObject[] {
  const chunks: JsonObject[] = [];
  const content = (parts: JsonObject[]): JsonObject => ({ content: { parts, role: 'model' }, index: 0 });
  if (plan.includeThoughts && plan.thought !== null) {
    chunks.push(envelope(meta, content([{ text: plan.thought, thought: true }]), usageMetadata(meta.prompt, 0, plan.thoughtsTokens, meta.override, false)));
  }
  if (plan.part?.kind === 'call') {
    const candidate = { ...content([plannedPart(plan.part, plan.callSignature)]), finishReason: plan.finishReason };
    chunks.push(envelope(meta, candidate, usageMetadata(meta.prompt, plan.candidatesTokens, plan.thoughtsTokens, meta.override)));
    return chunks;
  }
  const words = plan.part === null ? [] : splitWords(plan.part.text);
  let sent = '';
  for (let index = 0; index < words.length; index += 3) {
    const piece = words.slice(index, index + 3).join('');
    sent += piece;
    const last = index + 3 >= words.length;
    const parts: JsonObject[] = [{ text: piece }];
    if (last && plan.textSignature !== undefined) parts.push({ text: '', thoughtSignature: plan.textSignature });
    const candidate: JsonObject = last ? { ...content(parts), finishReason: plan.finishReason } : content(parts);
    if (last && plan.grounding !== undefined) candidate.groundingMetadata = plan.grounding;
    chunks.push(envelope(meta, candidate, usageMetadata(meta.prompt, countTokens(sent), plan.thoughtsTokens, meta.override)));
  }
  if (words.length === 0) {
    chunks.push(envelope(meta, { finishReason: plan.finishReason, index: 0 }, usageMetadata(meta.prompt, 0, plan.thoughtsTokens, meta.override)));
  }
  return chunks;
}

/** A unit vector of `dimensions` values, derived from the text alone. */
export function embeddingVector(text: string, dimensions: number): number[] {
  const values: number[] = [];
  let block = createHash('sha256').update(text).digest();
  while (values.length < dimensions) {
    for (let offset = 0; offset + 4 <= block.length && values.length < dimensions; offset += 4) values.push(block.readInt32LE(offset) / 2 ** 31);
    block = createHash('sha256').update(block).digest();
  }
  const norm = Math.sqrt(values.reduce((sum, value) => sum + value * value, 0)) || 1;
  return values.map((value) => Math.round((value / norm) * 1e8) / 1e8);
}
