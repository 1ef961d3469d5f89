/**
 * fast-check arbitraries of canonical values for the Anthropic round-trip properties. Conversations are generated
 * in the normal form Anthropic's wire can hold without loss (see round-trip-request.test.ts).
 */
import fc from 'fast-check';
import type { ChatRequest, ToolDefinition } from '../../../src/ir/chat-request.js';
import type { ChatResponse } from '../../../src/ir/chat-response.js';
import type { FinishReason, UnifiedFinishReason } from '../../../src/ir/finish-reason.js';
import type { ContentPart, FilePart, ImagePart, Message, ReasoningPart, TextPart, ToolCallPart, ToolResultPart } from '../../../src/ir/message.js';
import type { Usage } from '../../../src/ir/usage.js';

export const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 });
const word = fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/);
const base64 = fc.uint8Array({ minLength: 1, maxLength: 24 }).map((bytes) => Buffer.from(bytes).toString('base64'));
const cacheControl = fc.constantFrom<TextPart['cacheControl']>({ type: 'ephemeral' }, { type: 'ephemeral', ttl: '1h' }, { type: 'ephemeral', ttl: '5m' });

export const textPart: fc.Arbitrary<TextPart> = fc.record({ type: fc.constant('text' as const), text, cacheControl }, { requiredKeys: ['type', 'text'] });

export const imagePart: fc.Arbitrary<ImagePart> = fc.oneof(
  fc.record({ mediaType: fc.constantFrom('image/jpeg', 'image/png', 'image/gif', 'image/webp'), data: base64 }).map(({ mediaType, data }): ImagePart => ({ type: 'image', source: { kind: 'base64', mediaType, data } })),
  word.map((name): ImagePart => ({ type: 'image', source: { kind: 'url', url: `https://images.example/${name}.png` } })),
);

const filename = fc.option(word.map((name) => `${name}.pdf`), { nil: undefined });
export const filePart: fc.Arbitrary<FilePart> = fc
  .tuple(
    fc.oneof(
      base64.map((data): FilePart['source'] => ({ kind: 'base64', mediaType: 'application/pdf', data })),
      word.map((name): FilePart['source'] => ({ kind: 'url', url: `https://docs.example/${name}.pdf`, mediaType: 'application/pdf' })),
      text.map((plain): FilePart['source'] => ({ kind: 'base64', mediaType: 'text/plain', data: Buffer.from(plain).toString('base64') })),
    ),
    filename,
  )
  .map(([source, name]) => (name === undefined ? { type: 'file', source } : { type: 'file', source, filename: name }));

export const reasoningPart: fc.Arbitrary<ReasoningPart> = fc.oneof(
  fc.record({ text: fc.string({ maxLength: 30 }), signature: base64 }).map(({ text: thinking, signature }): ReasoningPart => ({ type: 'reasoning', text: thinking, signature })),
  base64.map((data): ReasoningPart => ({ type: 'reasoning', text: '', redactedData: data })),
);

export const argumentsJson = fc.dictionary(word, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }).map((value) => JSON.stringify(value));

const userParts = fc.array(fc.oneof({ weight: 3, arbitrary: textPart }, { weight: 1, arbitrary: imagePart }, { weight: 1, arbitrary: filePart }), { minLength: 1, maxLength: 3 });

interface AssistantTurn {
  reasoning: ReasoningPart[];
  texts: TextPart[];
  calls: Array<{ name: string; argumentsJson: string }>;
}

const assistantTurn: fc.Arbitrary<AssistantTurn> = fc
  .record({ reasoning: fc.array(reasoningPart, { maxLength: 2 }), texts: fc.array(textPart, { maxLength: 2 }), calls: fc.array(fc.record({ name: word, argumentsJson }), { maxLength: 3 }) })
  .filter((turn) => turn.reasoning.length + turn.texts.length + turn.calls.length > 0);

const toolResultContent = fc.array(fc.oneof(textPart, imagePart), { maxLength: 2 });

interface Exchange {
  user: ContentPart[];
  assistant: AssistantTurn | null;
  results: Array<{ content: Array<TextPart | ImagePart>; isError: boolean }>;
  followUp: ContentPart[] | null;
}

const exchange: fc.Arbitrary<Exchange> = fc.record({
  user: userParts,
  assistant: fc.option(assistantTurn, { nil: null }),
  results: fc.array(fc.record({ content: toolResultContent, isError: fc.boolean() }), { minLength: 3, maxLength: 3 }),
  followUp: fc.option(userParts, { nil: null }),
});

/**
 * Conversations Anthropic can carry as they are: a user turn opens each exchange; an assistant turn (reasoning first)
 * may call tools, answered by a tool message right after, optionally followed by more user text; the last message
 * is never the assistant's.
 */
export const conversation: fc.Arbitrary<Message[]> = fc.array(exchange, { minLength: 1, maxLength: 3 }).map((exchanges) => {
  const messages: Message[] = [];
  let callCount = 0;
  exchanges.forEach((item, index) => {
    const last = messages.at(-1);
    if (last?.role === 'user') last.content.push(...item.user);
    else messages.push({ role: 'user', content: item.user });
    if (item.assistant === null || index === exchanges.length - 1) return;
    const calls: ToolCallPart[] = item.assistant.calls.map((call) => ({ type: 'tool-call', id: `toolu_${callCount++}`, name: call.name, argumentsJson: call.argumentsJson }));
    messages.push({ role: 'assistant', content: [...item.assistant.reasoning, ...item.assistant.texts, ...calls] });
    if (calls.length === 0) return;
    const results: ToolResultPart[] = calls.map((call, callIndex) => {
      const result = item.results[callIndex] ?? { content: [], isError: false };
      const part: ToolResultPart = { type: 'tool-result', toolCallId: call.id, toolName: call.name, content: result.content };
      if (result.isError) part.isError = true;
      return part;
    });
    messages.push({ role: 'tool', content: results });
    if (item.followUp !== null) messages.push({ role: 'user', content: item.followUp });
  });
  return messages;
});

const toolDefinition: fc.Arbitrary<ToolDefinition> = fc
  .record({ name: word, description: fc.option(text, { nil: undefined }), properties: fc.dictionary(word, fc.constantFrom({ type: 'string' }, { type: 'number' }), { maxKeys: 3 }) })
  .map(({ name, description, properties }) => {
    const tool: ToolDefinition = { name, parameters: { type: 'object', properties } };
    if (description !== undefined) tool.description = description;
    return tool;
  });

const tools = fc.uniqueArray(toolDefinition, { selector: (tool) => tool.name, minLength: 1, maxLength: 3 });

/** A canonical request in the subset Anthropic takes as it is (no seed, penalties, response format or strict tools). */
export const chatRequest: fc.Arbitrary<ChatRequest> = fc
  .record({
    system: fc.array(textPart, { maxLength: 2 }),
    messages: conversation,
    stream: fc.boolean(),
    maxOutputTokens: fc.integer({ min: 1, max: 64_000 }),
    sampling: fc.option(fc.record({ temperature: fc.double({ min: 0, max: 1, noNaN: true }), topP: fc.double({ min: 0, max: 1, noNaN: true }), topK: fc.integer({ min: 0, max: 500 }) }, { requiredKeys: [] }), { nil: null }),
    thinkingShare: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: null }),
    stopSequences: fc.option(fc.array(text.filter((value) => value.trim() !== ''), { minLength: 1, maxLength: 3 }), { nil: undefined }),
    tools: fc.option(tools, { nil: undefined }),
    choice: fc.option(fc.constantFrom('auto', 'none', 'required', 'tool'), { nil: undefined }),
    parallelToolCalls: fc.option(fc.boolean(), { nil: undefined }),
    user: fc.option(word, { nil: undefined }),
  })
  .map((draft) => {
    const request: ChatRequest = { model: 'public-model', system: draft.system, messages: draft.messages, stream: draft.stream, maxOutputTokens: draft.maxOutputTokens, extensions: {}, warnings: [] };
    if (draft.thinkingShare !== null && draft.maxOutputTokens > 1025) {
      request.reasoning = { budgetTokens: 1024 + Math.floor(draft.thinkingShare * (draft.maxOutputTokens - 1025)) };
    } else if (draft.sampling !== null) Object.assign(request, draft.sampling);
    if (draft.stopSequences !== undefined) request.stopSequences = draft.stopSequences;
    if (draft.tools !== undefined) request.tools = draft.tools;
    if (draft.choice !== undefined) request.toolChoice = draft.choice === 'tool' ? { kind: 'tool', name: draft.tools?.[0]?.name ?? 'missing' } : { kind: draft.choice };
    if (draft.parallelToolCalls !== undefined) request.parallelToolCalls = draft.parallelToolCalls;
    if (draft.user !== undefined) request.user = draft.user;
    return request;
  });

export const usage: fc.Arbitrary<Usage> = fc
  .record({ noCache: fc.nat(100_000), cacheRead: fc.nat(100_000), cacheWrite: fc.nat(100_000), output: fc.nat(50_000), reasoningShare: fc.double({ min: 0, max: 1, noNaN: true }) })
  .map(({ noCache, cacheRead, cacheWrite, output, reasoningShare }) => {
    const reasoning = Math.floor(output * reasoningShare);
    return { input: { total: noCache + cacheRead + cacheWrite, noCache, cacheRead, cacheWrite }, output: { total: output, text: output - reasoning, reasoning } };
  });

const anthropicRaw = fc.constantFrom('end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded');
const unified = fc.constantFrom<UnifiedFinishReason>('stop', 'length', 'tool-calls', 'content-filter', 'error', 'other');

/** Finish reasons from any upstream: Anthropic's own raw values, or another protocol's. */
export const finishReason: fc.Arbitrary<FinishReason> = fc.oneof(
  fc.record({ unified, raw: anthropicRaw }),
  fc.record({ unified, raw: fc.constantFrom('stop', 'length', 'tool_calls', 'STOP', 'MAX_TOKENS', 'SAFETY', null) }),
);

const responsePart: fc.Arbitrary<ContentPart> = fc.oneof(
  textPart.map((part): ContentPart => ({ type: 'text', text: part.text })),
  reasoningPart,
  fc.record({ id: word, name: word, argumentsJson }).map(({ id, name, argumentsJson: args }): ContentPart => ({ type: 'tool-call', id: `toolu_${id}`, name, argumentsJson: args })),
);

export const chatResponse: fc.Arbitrary<ChatResponse> = fc.record({
  id: word.map((id) => `msg_${id}`),
  model: fc.constant('claude-upstream'),
  created: fc.constant(0),
  content: fc.array(responsePart, { maxLength: 5 }),
  finishReason,
  usage,
  warnings: fc.constant([]),
});
