/** fast-check generators of canonical requests, responses and stream part sequences for the Gemini round trips. */
import fc from 'fast-check';
import type { ChatRequest, ResponseFormat, ToolChoice, ToolDefinition } from '../../../src/ir/chat-request.js';
import type { ChatResponse } from '../../../src/ir/chat-response.js';
import type { FinishReason } from '../../../src/ir/finish-reason.js';
import type { ContentPart, Message, TextPart } from '../../../src/ir/message.js';
import type { StreamPart } from '../../../src/ir/stream-part.js';
import type { Usage } from '../../../src/ir/usage.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const safeKey = fc.stringMatching(/^[a-z][a-z0-9_]{0,6}$/);
const leaf: fc.Arbitrary<Json> = fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean(), fc.constant(null), fc.double({ noNaN: true, noDefaultInfinity: true }));
const { json } = fc.letrec<{ json: Json }>((tie) => ({
  json: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('json'), { maxLength: 3 }), fc.dictionary(safeKey, tie('json'), { maxKeys: 3 })),
}));
export const jsonObject: fc.Arbitrary<{ [key: string]: Json }> = fc.dictionary(safeKey, json, { maxKeys: 4 });

export const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 16 });
const signature = fc.option(fc.base64String({ minLength: 4, maxLength: 24 }), { nil: undefined });
export const toolName = fc.stringMatching(/^[a-z_][a-z0-9_]{0,15}$/);
const base64Data = fc.base64String({ minLength: 4, maxLength: 24 });

function withSignature<T extends object>(part: T, value: string | undefined): T & { signature?: string } {
  return value === undefined ? part : { ...part, signature: value };
}

const textPart: fc.Arbitrary<TextPart> = fc.tuple(text, signature).map(([value, sig]) => withSignature({ type: 'text' as const, text: value }, sig));
const imagePart = base64Data.map((data): ContentPart => ({ type: 'image', source: { kind: 'base64', mediaType: 'image/png', data } }));
const urlImagePart = fc.webUrl().map((url): ContentPart => ({ type: 'image', source: { kind: 'url', url, mediaType: 'image/png' } }));
const filePart = base64Data.map((data): ContentPart => ({ type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data } }));
const reasoningPart = fc.tuple(text, signature).map(([value, sig]): ContentPart => withSignature({ type: 'reasoning' as const, text: value }, sig));
const toolCallPart = fc.tuple(toolName, jsonObject, signature).map(([name, args, sig]): ContentPart => withSignature({ type: 'tool-call' as const, id: '', name, argumentsJson: JSON.stringify(args) }, sig));

const userContent = fc.array(fc.oneof(textPart.map((part): ContentPart => ({ type: 'text', text: part.text })), imagePart, urlImagePart, filePart), { minLength: 1, maxLength: 3 });
const assistantContent = fc.array(fc.oneof(textPart, reasoningPart, toolCallPart), { minLength: 1, maxLength: 4 });
const resultSpec = fc.record({ text: fc.oneof(text, jsonObject.map((object) => JSON.stringify(object))), isError: fc.boolean(), answered: fc.boolean() });

/** A conversation: user turns, assistant turns with calls (ids assigned in order) and tool results for them. */
export const messages: fc.Arbitrary<Message[]> = fc
  .array(fc.record({ user: fc.option(userContent, { nil: null }), assistant: fc.option(assistantContent, { nil: null }), results: fc.array(resultSpec, { maxLength: 4 }) }), { minLength: 1, maxLength: 4 })
  .map((steps) => {
    let calls = 0;
    const list: Message[] = [];
    for (const step of steps) {
      if (step.user !== null) list.push({ role: 'user', content: step.user });
      if (step.assistant === null) continue;
      const content = step.assistant.map((part) => (part.type === 'tool-call' ? { ...part, id: `call_${calls++}` } : part));
      list.push({ role: 'assistant', content });
      const results = content.flatMap((part, index) => {
        const spec = step.results[index % Math.max(step.results.length, 1)];
        if (part.type !== 'tool-call' || spec === undefined || !spec.answered) return [];
        return [{ type: 'tool-result' as const, toolCallId: part.id, toolName: part.name, content: [{ type: 'text' as const, text: spec.text }], ...(spec.isError ? { isError: true } : {}) }];
      });
      if (results.length > 0) list.push({ role: 'tool', content: results });
    }
    return list.length === 0 ? [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] : list;
  });

const simpleSchema = fc
  .dictionary(safeKey, fc.constantFrom('string', 'number', 'integer', 'boolean'), { maxKeys: 3 })
  .chain((properties) =>
    fc.subarray(Object.keys(properties)).map((required) => {
      const schema: Record<string, unknown> = { type: 'object', properties: Object.fromEntries(Object.entries(properties).map(([key, type]) => [key, { type }])) };
      if (required.length > 0) schema.required = required;
      return schema;
    }),
  );

const toolDefinition: fc.Arbitrary<ToolDefinition> = fc
  .record({ name: toolName, description: fc.option(text, { nil: undefined }), parameters: simpleSchema, strict: fc.option(fc.boolean(), { nil: undefined }) })
  .map(({ name, description, parameters, strict }) => ({ name, parameters, ...(description === undefined ? {} : { description }), ...(strict === undefined ? {} : { strict }) }));

const toolChoice: fc.Arbitrary<ToolChoice> = fc.oneof(
  fc.constant({ kind: 'auto' as const }),
  fc.constant({ kind: 'none' as const }),
  fc.constant({ kind: 'required' as const }),
  toolName.map((name) => ({ kind: 'tool' as const, name })),
);

const responseFormat: fc.Arbitrary<ResponseFormat> = fc.oneof(
  fc.constant({ kind: 'text' as const }),
  fc.constant({ kind: 'json' as const }),
  simpleSchema.filter((schema) => Object.keys(schema.properties as object).length > 0).map((schema) => ({ kind: 'json-schema' as const, name: 'answer', schema })),
);

const optional = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arbitrary, { nil: undefined });

export const chatRequest: fc.Arbitrary<ChatRequest> = fc
  .record({
    system: fc.array(text.map((value): TextPart => ({ type: 'text', text: value })), { maxLength: 2 }),
    messages,
    stream: fc.boolean(),
    maxOutputTokens: optional(fc.integer({ min: 1, max: 100_000 })),
    temperature: optional(fc.double({ min: 0, max: 2, noNaN: true })),
    topP: optional(fc.double({ min: 0, max: 1, noNaN: true })),
    topK: optional(fc.integer({ min: 1, max: 100 })),
    stopSequences: optional(fc.array(text, { minLength: 1, maxLength: 7 })),
    seed: optional(fc.integer()),
    presencePenalty: optional(fc.double({ min: -2, max: 2, noNaN: true })),
    frequencyPenalty: optional(fc.double({ min: -2, max: 2, noNaN: true })),
    tools: optional(fc.array(toolDefinition, { minLength: 1, maxLength: 3 })),
    toolChoice: optional(toolChoice),
    parallelToolCalls: optional(fc.boolean()),
    responseFormat: optional(responseFormat),
    reasoning: optional(
      fc.record(
        { effort: fc.constantFrom('minimal' as const, 'low' as const, 'medium' as const, 'high' as const), budgetTokens: fc.integer({ min: 0, max: 32_768 }), includeThoughts: fc.boolean() },
        { requiredKeys: [] },
      ),
    ),
    user: optional(fc.string({ maxLength: 8 })),
  })
  .map((fields) => {
    const request: ChatRequest = { model: 'public', system: fields.system, messages: fields.messages, stream: fields.stream, extensions: {}, warnings: [] };
    for (const [key, value] of Object.entries(fields)) if (value !== undefined && !(key in request)) (request as unknown as Record<string, unknown>)[key] = value;
    return request;
  });

export const usage: fc.Arbitrary<Usage> = fc
  .record({ input: fc.nat(100_000), cached: fc.nat(100_000), output: fc.nat(100_000), reasoning: fc.nat(100_000) })
  .map(({ input, cached, output, reasoning }) => {
    const cacheRead = Math.min(cached, input);
    const thinking = Math.min(reasoning, output);
    return { input: { total: input, noCache: input - cacheRead, cacheRead, cacheWrite: 0 }, output: { total: output, text: output - thinking, reasoning: thinking } };
  });

const answerPart: fc.Arbitrary<ContentPart> = fc.oneof(
  textPart,
  signature.filter((value) => value !== undefined).map((value): ContentPart => ({ type: 'text', text: '', signature: value })),
  reasoningPart,
  toolCallPart,
  imagePart,
  filePart,
);

const finishWithoutCalls: fc.Arbitrary<FinishReason> = fc.oneof(
  fc.constantFrom<FinishReason>(
    { unified: 'stop', raw: null },
    { unified: 'stop', raw: 'STOP' },
    { unified: 'length', raw: null },
    { unified: 'length', raw: 'MAX_TOKENS' },
    { unified: 'content-filter', raw: null },
    { unified: 'content-filter', raw: 'RECITATION' },
    { unified: 'other', raw: null },
    { unified: 'other', raw: 'LANGUAGE' },
    { unified: 'error', raw: 'MALFORMED_FUNCTION_CALL' },
  ),
);

export const chatResponse: fc.Arbitrary<ChatResponse> = fc
  .record({ id: fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/), content: fc.array(answerPart, { maxLength: 5 }), usage, finish: finishWithoutCalls })
  .map(({ id, content, usage: counts, finish }) => {
    const numbered = content.map((part, index) => (part.type === 'tool-call' ? { ...part, id: `call_${index}` } : part));
    const hasCalls = numbered.some((part) => part.type === 'tool-call');
    return { id, model: 'public', created: 1, content: numbered, finishReason: hasCalls ? { unified: 'tool-calls', raw: null } : finish, usage: counts, warnings: [] };
  });

export type StreamItem =
  | { kind: 'text' | 'reasoning'; deltas: string[]; signature?: string }
  | { kind: 'tool'; name: string; args: { [key: string]: Json }; cuts: number[]; signature?: string }
  | { kind: 'usage'; usage: Usage };

const streamItem: fc.Arbitrary<StreamItem> = fc.oneof(
  fc.record({ kind: fc.constantFrom('text' as const, 'reasoning' as const), deltas: fc.array(text, { maxLength: 3 }), signature }).map((item) => withSignature({ kind: item.kind, deltas: item.deltas }, item.signature)),
  fc.record({ name: toolName, args: jsonObject, cuts: fc.array(fc.nat(), { maxLength: 3 }), signature }).map((item) => withSignature({ kind: 'tool' as const, name: item.name, args: item.args, cuts: item.cuts }, item.signature)),
  usage.map((counts) => ({ kind: 'usage' as const, usage: counts })),
);

export type StreamEnd = { type: 'finish'; reason: FinishReason; usage: Usage | null } | { type: 'error'; status: number };

export const streamScript = fc.record({
  id: fc.stringMatching(/^[A-Za-z0-9_-]{1,24}$/),
  items: fc.array(streamItem, { maxLength: 8 }),
  end: fc.oneof(
    fc.record({ type: fc.constant('finish' as const), reason: fc.oneof(finishWithoutCalls, fc.constant<FinishReason>({ unified: 'tool-calls', raw: null })), usage: fc.option(usage, { nil: null }) }),
    fc.record({ type: fc.constant('error' as const), status: fc.constantFrom(429, 500, 502, 503, 504) }),
  ),
});

/** The canonical parts of a script, in the documented order. */
export function streamParts(script: { id: string; items: StreamItem[]; end: StreamEnd }): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'response-start', id: script.id, model: 'public', created: 1 }];
  let tools = 0;
  script.items.forEach((item, index) => {
    const id = `b${index}`;
    if (item.kind === 'usage') parts.push({ type: 'usage', usage: item.usage });
    else if (item.kind === 'tool') {
      const argumentsJson = JSON.stringify(item.args);
      const cuts = [...new Set(item.cuts.map((cut) => cut % (argumentsJson.length + 1)))].sort((a, b) => a - b);
      parts.push(withSignature({ type: 'tool-input-start' as const, id, toolCallId: `call_${tools}`, toolName: item.name, index: tools++ }, item.signature));
      [0, ...cuts].forEach((start, position, all) => {
        const delta = argumentsJson.slice(start, all[position + 1] ?? argumentsJson.length);
        if (delta !== '') parts.push({ type: 'tool-input-delta', id, delta });
      });
      parts.push({ type: 'tool-input-end', id });
    } else {
      const kind = item.kind;
      parts.push({ type: kind === 'text' ? 'text-start' : 'reasoning-start', id });
      for (const delta of item.deltas) parts.push({ type: kind === 'text' ? 'text-delta' : 'reasoning-delta', id, delta });
      parts.push(withSignature({ type: kind === 'text' ? ('text-end' as const) : ('reasoning-end' as const), id }, item.signature));
    }
  });
  if (script.end.type === 'finish') parts.push({ type: 'finish', reason: script.end.reason, usage: script.end.usage });
  else parts.push({ type: 'error', status: script.end.status, code: 'upstream_error', message: 'failed' });
  return parts;
}
