/** fast-check generators of canonical requests, responses and stream part sequences for the round-trip properties. */
import fc from 'fast-check';
import type { ChatRequest, ResponseFormat, ToolChoice, ToolDefinition } from '../../../src/ir/chat-request.js';
import type { ChatResponse } from '../../../src/ir/chat-response.js';
import type { UnifiedFinishReason } from '../../../src/ir/finish-reason.js';
import type { ContentPart, FilePart, ImagePart, Message, TextPart, ToolCallPart, ToolResultPart } from '../../../src/ir/message.js';
import type { StreamPart } from '../../../src/ir/stream-part.js';
import type { Usage } from '../../../src/ir/usage.js';

export const text = fc.string({ unit: 'grapheme', maxLength: 16 });
const nonEmptyText = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 16 });
const identifier = fc.stringMatching(/^[a-zA-Z_][a-zA-Z0-9_-]{0,15}$/);
const base64 = fc.uint8Array({ minLength: 1, maxLength: 24 }).map((bytes) => Buffer.from(bytes).toString('base64'));
const undefinedOr = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arbitrary, { nil: undefined });

const textPart: fc.Arbitrary<TextPart> = text.map((value) => ({ type: 'text', text: value }));

const imagePart: fc.Arbitrary<ImagePart> = fc.record({
  source: fc.oneof(
    fc.webUrl().map((url) => ({ kind: 'url' as const, url })),
    fc.record({ kind: fc.constant('base64' as const), mediaType: fc.constantFrom('image/png', 'image/jpeg', 'image/webp'), data: base64 }),
  ),
  detail: undefinedOr(fc.constantFrom('auto' as const, 'low' as const, 'high' as const)),
}).map(({ source, detail }) => (detail === undefined ? { type: 'image', source } : { type: 'image', source, detail }));

const filePart: fc.Arbitrary<FilePart> = fc.oneof(
  fc.record({ data: base64, filename: undefinedOr(fc.stringMatching(/^[a-z]{1,8}\.pdf$/)) }).map(({ data, filename }): FilePart => {
    const file: FilePart = { type: 'file', source: { kind: 'base64', mediaType: 'application/pdf', data } };
    if (filename !== undefined) file.filename = filename;
    return file;
  }),
  fc.record({ data: base64, mediaType: fc.constantFrom('audio/wav', 'audio/mpeg') }).map(({ data, mediaType }): FilePart => ({ type: 'file', source: { kind: 'base64', mediaType, data } })),
);

const userPart: fc.Arbitrary<ContentPart> = fc.oneof({ weight: 3, arbitrary: textPart }, { weight: 1, arbitrary: imagePart }, { weight: 1, arbitrary: filePart });

interface TurnSpec {
  kind: 'user' | 'assistant';
  parts: ContentPart[];
  toolCalls: Array<{ name: string; argumentsJson: string }>;
  results: TextPart[][];
  /** Tool results as one tool message, one per call, or inside the next user turn (Anthropic's shape). */
  resultShape: 'one' | 'each' | 'in-user';
}

const turnSpec: fc.Arbitrary<TurnSpec> = fc.record({
  kind: fc.constantFrom('user' as const, 'assistant' as const),
  parts: fc.array(fc.oneof(userPart, fc.record({ type: fc.constant('reasoning' as const), text }), textPart), { minLength: 1, maxLength: 4 }),
  toolCalls: fc.array(fc.record({ name: identifier, argumentsJson: fc.constantFrom('', '{}', '{"a":1}', '{"q":"x y"}') }), { maxLength: 3 }),
  results: fc.array(fc.array(textPart, { minLength: 1, maxLength: 2 }), { minLength: 3, maxLength: 3 }),
  resultShape: fc.constantFrom('one' as const, 'each' as const, 'in-user' as const),
});

/** A conversation where every tool result answers an earlier call (ids unique), in the shapes decoders produce. */
export const conversation: fc.Arbitrary<Message[]> = fc.array(turnSpec, { minLength: 1, maxLength: 5 }).map((turns) => {
  const messages: Message[] = [];
  let callCount = 0;
  let carried: ToolResultPart[] = [];
  for (const turn of turns) {
    if (turn.kind === 'user') {
      const parts = turn.parts.filter((part) => part.type !== 'reasoning');
      messages.push({ role: 'user', content: [...carried, ...(parts.length > 0 ? parts : [{ type: 'text', text: 'x' } as TextPart])] });
      carried = [];
      continue;
    }
    if (carried.length > 0) {
      messages.push({ role: 'tool', content: carried });
      carried = [];
    }
    const calls: ToolCallPart[] = turn.toolCalls.map((call) => ({ type: 'tool-call', id: `call_${callCount++}`, name: call.name, argumentsJson: call.argumentsJson }));
    const parts = turn.parts.filter((part) => part.type === 'text' || part.type === 'reasoning');
    messages.push({ role: 'assistant', content: [...parts, ...calls] });
    const results: ToolResultPart[] = calls.map((call, index) => ({ type: 'tool-result', toolCallId: call.id, toolName: call.name, content: turn.results[index] ?? [] }));
    if (results.length === 0) continue;
    if (turn.resultShape === 'in-user') carried = results;
    else if (turn.resultShape === 'one') messages.push({ role: 'tool', content: results });
    else for (const result of results) messages.push({ role: 'tool', content: [result] });
  }
  if (carried.length > 0) messages.push({ role: 'tool', content: carried });
  return messages;
});

const tools: fc.Arbitrary<ToolDefinition[]> = fc.array(fc.record({
  name: identifier,
  description: undefinedOr(text),
  parameters: fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), fc.constantFrom({ type: 'string' }, { type: 'number' }, { type: 'boolean' }), { maxKeys: 3 })
    .map((properties) => ({ type: 'object', properties })),
  strict: undefinedOr(fc.boolean()),
}).map((tool) => {
  const definition: ToolDefinition = { name: tool.name, parameters: tool.parameters };
  if (tool.description !== undefined) definition.description = tool.description;
  if (tool.strict !== undefined) definition.strict = tool.strict;
  return definition;
}), { minLength: 1, maxLength: 3 });

const toolChoice: fc.Arbitrary<ToolChoice> = fc.oneof(
  fc.constantFrom<ToolChoice>({ kind: 'auto' }, { kind: 'none' }, { kind: 'required' }),
  identifier.map((name): ToolChoice => ({ kind: 'tool', name })),
);

const responseFormat: fc.Arbitrary<ResponseFormat> = fc.oneof(
  fc.constantFrom<ResponseFormat>({ kind: 'text' }, { kind: 'json' }),
  fc.record({ name: undefinedOr(identifier), description: undefinedOr(text), strict: undefinedOr(fc.boolean()) }).map(({ name, description, strict }) => {
    const format: ResponseFormat = { kind: 'json-schema', schema: { type: 'object', properties: { answer: { type: 'string' } } } };
    if (name !== undefined) format.name = name;
    if (description !== undefined) format.description = description;
    if (strict !== undefined) format.strict = strict;
    return format;
  }),
);

const hundredths = (min: number, max: number): fc.Arbitrary<number> => fc.integer({ min: min * 100, max: max * 100 }).map((value) => value / 100);

/** A canonical request with every field an OpenAI body can carry (no topK or thinking budgets: OpenAI has neither). */
export const chatRequest: fc.Arbitrary<ChatRequest> = fc.record({
  system: fc.array(textPart, { maxLength: 3 }),
  messages: conversation,
  stream: fc.boolean(),
  maxOutputTokens: undefinedOr(fc.integer({ min: 1, max: 100_000 })),
  temperature: undefinedOr(hundredths(0, 2)),
  topP: undefinedOr(hundredths(0, 1)),
  stopSequences: undefinedOr(fc.array(nonEmptyText, { minLength: 1, maxLength: 4 })),
  seed: undefinedOr(fc.integer()),
  presencePenalty: undefinedOr(hundredths(-2, 2)),
  frequencyPenalty: undefinedOr(hundredths(-2, 2)),
  tools: undefinedOr(tools),
  toolChoice: undefinedOr(toolChoice),
  parallelToolCalls: undefinedOr(fc.boolean()),
  responseFormat: undefinedOr(responseFormat),
  reasoning: undefinedOr(fc.constantFrom('minimal' as const, 'low' as const, 'medium' as const, 'high' as const).map((effort) => ({ effort }))),
  user: undefinedOr(text),
}).map((fields): ChatRequest => {
  const request: ChatRequest = { model: 'public-model', system: fields.system, messages: fields.messages, stream: fields.stream, extensions: {}, warnings: [] };
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) (request as unknown as Record<string, unknown>)[name] = value;
  return request;
});

export const usage: fc.Arbitrary<Usage> = fc.record({
  noCache: fc.nat(100_000), cacheRead: fc.nat(100_000), cacheWrite: fc.nat(100_000), text: fc.nat(100_000), reasoning: fc.nat(100_000),
}).map((counts) => ({
  input: { total: counts.noCache + counts.cacheRead + counts.cacheWrite, noCache: counts.noCache, cacheRead: counts.cacheRead, cacheWrite: counts.cacheWrite },
  output: { total: counts.text + counts.reasoning, text: counts.text, reasoning: counts.reasoning },
}));

export const unifiedReason = fc.constantFrom<UnifiedFinishReason>('stop', 'length', 'tool-calls', 'content-filter', 'error', 'other');

const responsePart: fc.Arbitrary<ContentPart> = fc.oneof(
  textPart,
  fc.record({ text, signature: undefinedOr(base64) }).map(({ text: value, signature }): ContentPart => (signature === undefined ? { type: 'reasoning', text: value } : { type: 'reasoning', text: value, signature })),
  fc.record({ id: identifier, name: identifier, argumentsJson: fc.constantFrom('', '{}', '{"city":"Paris"}') }).map((call): ContentPart => ({ type: 'tool-call', ...call })),
);

export const chatResponse: fc.Arbitrary<ChatResponse> = fc.record({
  id: fc.oneof(identifier, identifier.map((value) => `chatcmpl-${value}`)),
  created: fc.integer({ min: 0, max: 2_000_000_000 }),
  content: fc.array(responsePart, { maxLength: 6 }),
  unified: unifiedReason,
  raw: fc.option(identifier, { nil: null }),
  usage,
}).map(({ unified, raw, ...rest }) => ({ ...rest, model: 'upstream-model', finishReason: { unified, raw }, warnings: [] }));

type BlockSpec =
  | { kind: 'text' | 'reasoning'; deltas: string[] }
  | { kind: 'tools'; calls: Array<{ name: string; fragments: string[] }>; schedule: number[] };

const blockSpec: fc.Arbitrary<BlockSpec> = fc.oneof(
  fc.record({ kind: fc.constantFrom('text' as const, 'reasoning' as const), deltas: fc.array(text, { maxLength: 5 }) }),
  fc.record({
    kind: fc.constant('tools' as const),
    calls: fc.array(fc.record({ name: identifier, fragments: fc.array(text, { maxLength: 4 }) }), { minLength: 1, maxLength: 3 }),
    schedule: fc.array(fc.nat(5), { maxLength: 20 }),
  }),
);

/** Tool events of one block: each call's start before its fragments, calls interleaved as the schedule says. */
function toolEvents(spec: Extract<BlockSpec, { kind: 'tools' }>, firstIndex: number, firstCall: number): StreamPart[] {
  const queues: StreamPart[][] = spec.calls.map((call, offset) => {
    const id = `tool-block-${firstCall + offset}`;
    return [
      { type: 'tool-input-start', id, toolCallId: `toolu_${firstCall + offset}`, toolName: call.name, index: firstIndex + offset },
      ...call.fragments.map((delta): StreamPart => ({ type: 'tool-input-delta', id, delta })),
    ];
  });
  const events: StreamPart[] = [];
  for (const pick of spec.schedule) {
    const queue = queues[pick % queues.length];
    const next = queue?.shift();
    if (next !== undefined) events.push(next);
  }
  for (const queue of queues) events.push(...queue);
  // `index` counts tool calls in the order they start.
  let next = firstIndex;
  const ordered = events.map((event): StreamPart => (event.type === 'tool-input-start' ? { ...event, index: next++ } : event));
  return [...ordered, ...spec.calls.map((_, offset): StreamPart => ({ type: 'tool-input-end', id: `tool-block-${firstCall + offset}` }))];
}

export interface StreamScenario {
  parts: StreamPart[];
  includeUsage: boolean;
  cuts: number[];
}

/** A well-formed canonical stream (see StreamPart), ending in a finish or an error, and where to cut its bytes. */
export const streamScenario: fc.Arbitrary<StreamScenario> = fc.record({
  id: identifier,
  created: fc.integer({ min: 1, max: 2_000_000_000 }),
  blocks: fc.array(blockSpec, { maxLength: 5 }),
  midUsage: undefinedOr(usage),
  end: fc.oneof(
    fc.record({ kind: fc.constant('finish' as const), unified: unifiedReason, raw: fc.option(identifier, { nil: null }), usage: fc.option(usage, { nil: null }) }),
    fc.record({ kind: fc.constant('error' as const), message: text }),
  ),
  includeUsage: fc.boolean(),
  cuts: fc.array(fc.nat(4000), { maxLength: 30 }),
}).map(({ id, created, blocks, midUsage, end, includeUsage, cuts }) => {
  const parts: StreamPart[] = [{ type: 'response-start', id, model: 'upstream-model', created }];
  let calls = 0;
  blocks.forEach((block, position) => {
    if (block.kind === 'tools') {
      parts.push(...toolEvents(block, calls, calls));
      calls += block.calls.length;
      return;
    }
    const blockId = `${block.kind}-block-${position}`;
    parts.push(block.kind === 'text' ? { type: 'text-start', id: blockId } : { type: 'reasoning-start', id: blockId });
    for (const delta of block.deltas) parts.push(block.kind === 'text' ? { type: 'text-delta', id: blockId, delta } : { type: 'reasoning-delta', id: blockId, delta });
    parts.push(block.kind === 'text' ? { type: 'text-end', id: blockId } : { type: 'reasoning-end', id: blockId, signature: 'sig' });
  });
  if (midUsage !== undefined) parts.push({ type: 'usage', usage: midUsage });
  parts.push(end.kind === 'finish'
    ? { type: 'finish', reason: { unified: end.unified, raw: end.raw }, usage: end.usage }
    : { type: 'error', status: 502, code: 'upstream_error', message: end.message });
  return { parts, includeUsage, cuts };
});
