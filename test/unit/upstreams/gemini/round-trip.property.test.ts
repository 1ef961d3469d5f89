/**
 * Round trips between the Gemini codec (client side) and the Gemini adapter (upstream side), which must agree on
 * the wire:
 * 1. request:  IR → adapter.buildChatRequest → wire body → codec.decodeRequest → IR
 * 2. response: IR → codec.encodeResponse → wire body → adapter.parseChatResponse → IR
 * 3. stream:   IR parts → codec stream encoder (SSE and JSON array) → bytes cut at random → adapter.parseChatStream
 *
 * What the wire cannot carry is normalised on the expected side, each rule stated where it is applied: consecutive
 * turns of one role merge (Gemini has only user/model turns) and user turns split again into tool results and the
 * rest; JSON text (tool arguments, object tool results) compares as parsed JSON; fields Gemini has no place for
 * (cache hints, image detail, file names, parallel tool calls, user, strict, schema names) are dropped; an effort
 * becomes the budget it maps to on Gemini 2.x; Gemini 3 gets the placeholder signature on unsigned calls; an empty
 * text part that carries only a signature right after a step's calls signs the first of them when it has none.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { geminiCodec, geminiCodecFor } from '../../../../src/codecs/gemini/index.js';
import { GEMINI_FINISH_REASONS } from '../../../../src/wire/gemini/finish-reason.js';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import type { ChatResponse } from '../../../../src/ir/chat-response.js';
import type { FinishReason } from '../../../../src/ir/finish-reason.js';
import type { ContentPart, Message } from '../../../../src/ir/message.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import type { Usage } from '../../../../src/ir/usage.js';
import { DUMMY_THOUGHT_SIGNATURE } from '../../../../src/upstreams/gemini/build-contents.js';
import { GeminiAdapter } from '../../../../src/upstreams/gemini/gemini-adapter.js';
import { mapGeminiFinishReason } from '../../../../src/wire/gemini/finish-reason.js';
import { THINKING_BUDGET_BY_EFFORT } from '../../../../src/upstreams/gemini/thinking-config.js';
import { chatRequest, chatResponse, streamParts, streamScript, type StreamEnd, type StreamItem } from '../../gemini/arbitraries.js';
import { chatRequest as baseRequest, chunked, collect, geminiChannel, unusedTransport } from '../../gemini/gemini-test-support.js';

const adapter = new GeminiAdapter(unusedTransport);
const RUNS = { numRuns: 100 };

function normalJson(textValue: string): string {
  return JSON.stringify(JSON.parse(textValue));
}

function isJsonObjectText(value: string): boolean {
  try {
    const parsed: unknown = JSON.parse(value);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed);
  } catch {
    return false;
  }
}

/** One part as the wire keeps it. */
function wirePart(part: ContentPart): ContentPart {
  switch (part.type) {
    case 'text':
      return part.signature === undefined ? { type: 'text', text: part.text } : { type: 'text', text: part.text, signature: part.signature };
    case 'image':
      return { type: 'image', source: part.source };
    case 'file':
      return { type: 'file', source: part.source };
    case 'tool-call':
      return { ...part, argumentsJson: normalJson(part.argumentsJson) };
    case 'tool-result': {
      const textValue = part.content.map((item) => (item.type === 'text' ? item.text : '')).join('');
      const result = { type: 'tool-result' as const, toolCallId: part.toolCallId, toolName: part.toolName, content: [{ type: 'text' as const, text: isJsonObjectText(textValue) ? normalJson(textValue) : textValue }] };
      return part.isError === true ? { ...result, isError: true } : result;
    }
    default:
      return part;
  }
}

function expectedMessages(messages: Message[], gemini3: boolean): Message[] {
  const turns: Array<{ role: 'user' | 'model'; parts: ContentPart[] }> = [];
  for (const message of messages) {
    const role = message.role === 'assistant' ? 'model' : 'user';
    const last = turns[turns.length - 1];
    const parts = message.content.map(wirePart);
    if (last !== undefined && last.role === role) last.parts.push(...parts);
    else turns.push({ role, parts });
  }
  const result: Message[] = [];
  for (const turn of turns) {
    if (turn.role === 'model') {
      const first = turn.parts.findIndex((part) => part.type === 'tool-call');
      const call = turn.parts[first];
      if (gemini3 && call?.type === 'tool-call' && call.signature === undefined) turn.parts[first] = { ...call, signature: DUMMY_THOUGHT_SIGNATURE };
      result.push({ role: 'assistant', content: turn.parts });
      continue;
    }
    let current: Message | null = null;
    for (const part of turn.parts) {
      const role = part.type === 'tool-result' ? 'tool' : 'user';
      if (current !== null && current.role === role) current.content.push(part);
      else {
        current = { role, content: [part] };
        result.push(current);
      }
    }
  }
  return result;
}

function expectedRequest(request: ChatRequest, model: string): Record<string, unknown> {
  const gemini3 = model.startsWith('gemini-3');
  const messages = expectedMessages(request.messages, gemini3);
  const expected: Record<string, unknown> = { model, system: request.system, messages, stream: request.stream, extensions: {} };
  for (const key of ['maxOutputTokens', 'temperature', 'topP', 'topK', 'seed'] as const) if (request[key] !== undefined) expected[key] = request[key];
  if (request.stopSequences !== undefined) expected.stopSequences = request.stopSequences.slice(0, 5);
  for (const key of ['presencePenalty', 'frequencyPenalty'] as const) if (request[key] !== undefined && request[key] !== 0) expected[key] = request[key];
  const format = request.responseFormat;
  if (format?.kind === 'json') expected.responseFormat = { kind: 'json' };
  if (format?.kind === 'json-schema') expected.responseFormat = { kind: 'json-schema', schema: format.schema };
  const reasoning = request.reasoning;
  if (reasoning !== undefined) {
    const decoded: Record<string, unknown> = {};
    if (reasoning.budgetTokens !== undefined) decoded.budgetTokens = reasoning.budgetTokens;
    else if (reasoning.effort !== undefined) {
      if (gemini3) decoded.effort = reasoning.effort;
      else decoded.budgetTokens = THINKING_BUDGET_BY_EFFORT[reasoning.effort];
    }
    if (reasoning.includeThoughts !== undefined) decoded.includeThoughts = reasoning.includeThoughts;
    if (Object.keys(decoded).length > 0) expected.reasoning = decoded;
  }
  if (request.tools !== undefined && request.tools.length > 0) {
    expected.tools = request.tools.map((tool) => {
      const definition: Record<string, unknown> = { name: tool.name, parameters: tool.parameters };
      if (tool.description !== undefined) definition.description = tool.description;
      return definition;
    });
    if (request.toolChoice !== undefined) expected.toolChoice = request.toolChoice;
  }
  return expected;
}

describe('round trips between the Gemini codec and the Gemini adapter', () => {
  it('request: adapter.buildChatRequest → codec.decodeRequest', () => {
    fc.assert(
      fc.property(chatRequest, fc.constantFrom('gemini-2.5-flash', 'gemini-3-pro-preview'), (request, model) => {
        const built = adapter.buildChatRequest(geminiChannel(), 'key', request, model);
        const decoded = geminiCodec.decodeRequest(JSON.parse(String(built.body ?? '{}')) as Record<string, unknown>, { pathModel: model, stream: request.stream });
        const { warnings: _warnings, ...rest } = decoded;
        const actual = { ...rest, messages: rest.messages.map((message) => ({ ...message, content: message.content.map(wirePart) })) };
        const expected = expectedRequest(request, model);
        expect(JSON.parse(JSON.stringify(actual))).toEqual(JSON.parse(JSON.stringify(expected)));
      }),
      RUNS,
    );
  });

  it('response: codec.encodeResponse → adapter.parseChatResponse', () => {
    fc.assert(
      fc.property(chatResponse, (response) => {
        const request = baseRequest({ model: 'public' });
        const parsed = adapter.parseChatResponse(Buffer.from(geminiCodec.encodeResponse(response, 'public')), request);
        const hasCalls = response.content.some((part) => part.type === 'tool-call');
        const expected: ChatResponse = {
          ...response,
          created: parsed.created,
          content: signFirstCalls(response.content.map(wirePart)),
          finishReason: wireFinish(response.finishReason, hasCalls),
        };
        expect({ ...parsed, content: parsed.content.map(wirePart) }).toEqual(expected);
      }),
      RUNS,
    );
  });

  it('stream: codec stream encoder (both framings) → random network chunks → adapter.parseChatStream', async () => {
    await fc.assert(
      fc.asyncProperty(streamScript, fc.boolean(), fc.array(fc.nat(), { maxLength: 10 }), async (script, sse, rawCuts) => {
        const encoder = geminiCodecFor({ sse }).createStreamEncoder({ model: 'public' });
        const bytes = Buffer.from(streamParts(script).map((part) => encoder.encode(part)).join('') + encoder.end());
        const cuts = rawCuts.map((cut) => cut % (bytes.length + 1));
        const parsed = await collect(adapter.parseChatStream(chunked(bytes, cuts), baseRequest({ model: 'public', stream: true })));
        expect(view(parsed)).toEqual(expectedView(script));
      }),
      RUNS,
    );
  });
});

/** Wire rule for signatures: an empty signed text right after calls signs the first of them, if it has none. */
function signFirstCalls(content: ContentPart[]): ContentPart[] {
  const out: ContentPart[] = [];
  for (const part of content) {
    // Parts the wire does not carry sit between nothing.
    if ((part.type === 'text' || part.type === 'reasoning') && part.text === '' && part.signature === undefined) {
      out.push(part);
      continue;
    }
    const onWire = out.filter((kept) => !((kept.type === 'text' || kept.type === 'reasoning') && kept.text === '' && kept.signature === undefined));
    let first = onWire.length;
    while (onWire[first - 1]?.type === 'tool-call') first -= 1;
    const call = onWire[first];
    if (part.type === 'text' && part.text === '' && part.signature !== undefined && call?.type === 'tool-call' && call.signature === undefined) {
      out[out.indexOf(call)] = { ...call, signature: part.signature };
      continue;
    }
    out.push(part);
  }
  return out;
}

// Wire rule for finish reasons: a raw Gemini value travels as it is; otherwise the canonical reason's Gemini name.
function wireFinish(reason: FinishReason, hasCalls: boolean): FinishReason {
  const defaults: Record<FinishReason['unified'], string> = { stop: 'STOP', 'tool-calls': 'STOP', length: 'MAX_TOKENS', 'content-filter': 'SAFETY', error: 'OTHER', other: 'OTHER' };
  const raw = reason.raw !== null && GEMINI_FINISH_REASONS.has(reason.raw) ? reason.raw : defaults[reason.unified];
  return mapGeminiFinishReason(raw, hasCalls);
}

type ViewItem = { kind: 'text' | 'reasoning'; text: string; signature?: string } | { kind: 'tool'; toolCallId: string; name: string; index: number; args: string; signature?: string };
interface View {
  id: string | null;
  items: ViewItem[];
  end: { type: 'finish'; reason: FinishReason; usage: Usage | null } | { type: 'error'; status: number; code: string } | null;
}

/** What a stream says: its blocks with their whole text and signatures, and how it ended. */
function view(parts: StreamPart[]): View {
  const result: View = { id: null, items: [], end: null };
  const open = new Map<string, ViewItem>();
  for (const part of parts) {
    switch (part.type) {
      case 'response-start':
        result.id = part.id;
        break;
      case 'text-start':
      case 'reasoning-start': {
        const item: ViewItem = { kind: part.type === 'text-start' ? 'text' : 'reasoning', text: '' };
        open.set(part.id, item);
        result.items.push(item);
        break;
      }
      case 'text-delta':
      case 'reasoning-delta': {
        const item = open.get(part.id);
        if (item !== undefined && item.kind !== 'tool') item.text += part.delta;
        break;
      }
      case 'tool-input-start': {
        const item: ViewItem = { kind: 'tool', toolCallId: part.toolCallId, name: part.toolName, index: part.index, args: '' };
        if (part.signature !== undefined) item.signature = part.signature;
        open.set(part.id, item);
        result.items.push(item);
        break;
      }
      case 'tool-input-delta': {
        const item = open.get(part.id);
        if (item?.kind === 'tool') item.args += part.delta;
        break;
      }
      case 'text-end':
      case 'reasoning-end': {
        const item = open.get(part.id);
        if (item !== undefined && part.signature !== undefined) item.signature = part.signature;
        break;
      }
      case 'tool-input-end': {
        const item = open.get(part.id);
        if (item?.kind === 'tool') item.args = normalJson(item.args);
        break;
      }
      case 'usage':
        break;
      case 'finish':
        result.end = { type: 'finish', reason: part.reason, usage: part.usage };
        break;
      case 'error':
        result.end = { type: 'error', status: part.status, code: part.code };
        break;
    }
  }
  return result;
}

/**
 * The view the parser must produce: an unsigned text or reasoning block merges with the next block of its kind
 * (Gemini parts carry no block boundaries, only signatures end a block), blocks with neither text nor signature
 * vanish, a text block of only a signature right after calls signs the first of them when it has none, the finish
 * usage is the last one reported, and an error carries the gateway's upstream code.
 */
function expectedView(script: { id: string; items: StreamItem[]; end: StreamEnd }): View {
  const items: ViewItem[] = [];
  let usage: Usage | null = null;
  let tools = 0;
  for (const item of script.items) {
    if (item.kind === 'usage') {
      usage = item.usage;
      continue;
    }
    if (item.kind === 'tool') {
      const tool: ViewItem = { kind: 'tool', toolCallId: `call_${tools}`, name: item.name, index: tools++, args: JSON.stringify(item.args) };
      items.push(item.signature === undefined ? tool : { ...tool, signature: item.signature });
      continue;
    }
    const textValue = item.deltas.join('');
    if (textValue === '' && item.signature === undefined) continue;
    let first = items.length;
    while (items[first - 1]?.kind === 'tool') first -= 1;
    const call = items[first];
    if (item.kind === 'text' && textValue === '' && call?.kind === 'tool' && call.signature === undefined) {
      call.signature = item.signature;
      continue;
    }
    const last = items[items.length - 1];
    if (last !== undefined && last.kind === item.kind && last.signature === undefined) {
      last.text += textValue;
      if (item.signature !== undefined) last.signature = item.signature;
    } else items.push(item.signature === undefined ? { kind: item.kind, text: textValue } : { kind: item.kind, text: textValue, signature: item.signature });
  }
  const end: View['end'] =
    script.end.type === 'finish'
      ? { type: 'finish', reason: wireFinish(script.end.reason, tools > 0), usage: script.end.usage ?? usage }
      : { type: 'error', status: script.end.status === 429 || script.end.status === 503 ? 503 : 502, code: script.end.status === 429 || script.end.status === 503 ? 'upstream_unavailable' : 'upstream_error' };
  const started = script.end.type === 'finish' || items.length > 0;
  return { id: started ? script.id : null, items, end };
}
