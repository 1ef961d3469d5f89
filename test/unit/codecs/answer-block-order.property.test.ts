/**
 * Properties of the rule every client encoder keeps, streamed and not: a translated answer carries the blocks a
 * native answer of the same content would, in the same order, and ends with its text or tool use. Reasoning comes
 * after the last text or call only where the upstream's own reasoning came after it; no block holds nothing (text
 * without text, thinking with neither text nor signature); and a provider signature of a text or call (Gemini's)
 * travels before that block, in a reasoning block the client sends back, from which it returns to the same block.
 *
 * Answers are drawn the way Gemini writes them in any order: thoughts with or without a signature, text with or
 * without one (in a stream known only after the text), calls with or without one (known when the call starts).
 */
import fc from 'fast-check';
import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, it } from 'vitest';
import { anthropicMessagesCodec } from '../../../src/codecs/anthropic-messages/index.js';
import { decodeResponsesInput } from '../../../src/codecs/openai-responses/decode-input.js';
import { encodeResponsesResponse } from '../../../src/codecs/openai-responses/encode-response.js';
import { ResponsesStreamEncoder } from '../../../src/codecs/openai-responses/encode-stream.js';
import { echoOf } from '../../../src/codecs/openai-responses/response-object.js';
import { openAIChatCodec } from '../../../src/codecs/openai-chat/index.js';
import { anthropicWire } from '../../../src/wire/anthropic/wire.js';
import { responsesWire } from '../../../src/wire/responses/wire.js';
import type { ChatResponse } from '../../../src/ir/chat-response.js';
import type { ContentPart, ReasoningPart, TextPart, ToolCallPart } from '../../../src/ir/message.js';
import type { StreamPart } from '../../../src/ir/stream-part.js';
import { sdkAnswering } from '../anthropic/helpers.js';

type AnswerPart = TextPart | ReasoningPart | ToolCallPart;

const signature = fc.option(fc.base64String({ minLength: 4, maxLength: 24 }), { nil: undefined });
const words = fc.oneof(fc.constant(''), fc.stringMatching(/^[A-Za-z][A-Za-z .]{0,15}$/));
const answerPart: fc.Arbitrary<AnswerPart> = fc.oneof(
  fc.record({ text: words, signature }).map(({ text, signature: sig }): ReasoningPart => (sig === undefined ? { type: 'reasoning', text } : { type: 'reasoning', text, signature: sig })),
  fc.record({ text: words, signature }).map(({ text, signature: sig }): TextPart => (sig === undefined ? { type: 'text', text } : { type: 'text', text, signature: sig })),
  fc.record({ name: fc.stringMatching(/^[a-z_]{1,8}$/), location: words, signature }).map(({ name, location, signature: sig }): ToolCallPart => {
    const call: ToolCallPart = { type: 'tool-call', id: '', name, argumentsJson: JSON.stringify({ location }) };
    return sig === undefined ? call : { ...call, signature: sig };
  }),
);
const answer = fc.array(answerPart, { maxLength: 7 }).map((parts) => parts.map((part, index) => (part.type === 'tool-call' ? { ...part, id: `call_${index}` } : part)));

function chatResponse(content: AnswerPart[]): ChatResponse {
  const calls = content.some((part) => part.type === 'tool-call');
  return {
    id: 'gen-1',
    model: 'gemini-3-pro-preview',
    created: 1,
    content,
    finishReason: calls ? { unified: 'tool-calls', raw: 'STOP' } : { unified: 'stop', raw: 'STOP' },
    usage: { input: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 }, output: { total: 5, text: 5, reasoning: 0 } },
    warnings: [],
  };
}

/** The answer as the Gemini parser streams it: a text's signature at its end, a call's at its start. */
function streamOf(content: AnswerPart[]): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'response-start', id: 'gen-1', model: 'gemini-3-pro-preview', created: 1 }];
  let calls = 0;
  content.forEach((part, index) => {
    const id = `b${index}`;
    if (part.type === 'tool-call') {
      parts.push({ type: 'tool-input-start', id, toolCallId: part.id, toolName: part.name, index: calls++, ...(part.signature === undefined ? {} : { signature: part.signature }) });
      parts.push({ type: 'tool-input-delta', id, delta: part.argumentsJson }, { type: 'tool-input-end', id });
      return;
    }
    const kind = part.type === 'text' ? 'text' : 'reasoning';
    parts.push({ type: `${kind}-start`, id });
    if (part.text !== '') parts.push({ type: `${kind}-delta`, id, delta: part.text });
    parts.push({ type: `${kind}-end`, id, ...(part.signature === undefined ? {} : { signature: part.signature }) });
  });
  const response = chatResponse(content);
  parts.push({ type: 'finish', reason: response.finishReason, usage: response.usage });
  return parts;
}

/** Parts that show something or carry state: what a native answer has blocks for. */
const meaningful = (part: AnswerPart): boolean => (part.type === 'tool-call' ? true : part.text !== '' || (part.type === 'reasoning' && part.signature !== undefined));
const isAnswer = (part: AnswerPart): boolean => part.type === 'tool-call' || (part.type === 'text' && part.text !== '');

/** Reasoning parts the upstream wrote after its last text or call, which a faithful answer keeps after them too. */
function reasoningAfterAnswer(content: AnswerPart[]): number {
  const last = content.map(isAnswer).lastIndexOf(true);
  return content.slice(last + 1).filter((part) => part.type === 'reasoning' && meaningful(part)).length;
}

type Shown = { type: 'text'; text: string } | { type: 'call'; name: string | undefined };

/** The answer's texts and calls, in order, as the client's blocks show them. */
function shown(content: AnswerPart[]): Shown[] {
  return content.filter(isAnswer).map((part) => (part.type === 'tool-call' ? { type: 'call' as const, name: part.name } : { type: 'text' as const, text: (part as TextPart).text }));
}

/** Signatures the assistant turn must bring back, by block: calls always, text only where it was known before it. */
function signaturesOf(content: readonly ContentPart[], withText: boolean): Array<string | undefined> {
  return content.flatMap((part) => {
    if (part.type === 'tool-call') return [part.signature];
    if (part.type === 'text' && part.text !== '') return [withText ? part.signature : undefined];
    return [];
  });
}

function checkAnthropic(content: AnswerPart[], blocks: Anthropic.ContentBlock[], textSignatures: boolean): void {
  const answers = blocks.map((block) => block.type === 'text' || block.type === 'tool_use').lastIndexOf(true);
  if (content.some(isAnswer)) expect(blocks.length - 1 - answers).toBe(reasoningAfterAnswer(content));
  for (const block of blocks) {
    if (block.type === 'thinking') expect(block.thinking !== '' || block.signature !== '').toBe(true);
    if (block.type === 'text') expect(block.text).not.toBe('');
  }
  expect(blocks.flatMap((block): Shown[] => (block.type === 'text' ? [{ type: 'text', text: block.text }] : block.type === 'tool_use' ? [{ type: 'call', name: block.name }] : []))).toEqual(shown(content));
  // The client sends the turn back as it came: each signature returns to its block.
  const decoded = anthropicMessagesCodec.decodeRequest({
    model: 'm',
    max_tokens: 10,
    messages: [{ role: 'user', content: 'q' }, ...(blocks.length === 0 ? [] : [{ role: 'assistant', content: blocks }])],
  }, {});
  const turn = decoded.messages.find((message) => message.role === 'assistant')?.content ?? [];
  expect(signaturesOf(turn, true)).toEqual(signaturesOf(content, textSignatures));
}

type OutputItem = { type: string; name?: string; summary?: unknown[]; encrypted_content?: string | null; content?: Array<{ text: string }> };

function checkResponses(content: AnswerPart[], output: OutputItem[], textSignatures: boolean): void {
  const answers = output.map((item) => item.type === 'message' || item.type === 'function_call').lastIndexOf(true);
  if (content.some(isAnswer)) expect(output.length - 1 - answers).toBe(reasoningAfterAnswer(content));
  for (const item of output) {
    if (item.type === 'message') expect(item.content?.every((part) => part.text !== '')).toBe(true);
  }
  const texts = output.flatMap((item): Shown[] => (item.type === 'message' ? (item.content ?? []).map((part): Shown => ({ type: 'text', text: part.text })) : item.type === 'function_call' ? [{ type: 'call', name: item.name }] : []));
  expect(texts).toEqual(shown(content));
  // Codex keeps the output items (store: false) and sends them back as input.
  const decoded = decodeResponsesInput([{ role: 'user', content: 'q' }, ...output], undefined, []);
  const turn = decoded.messages.filter((message) => message.role === 'assistant').flatMap((message) => message.content);
  expect(signaturesOf(turn, true)).toEqual(signaturesOf(content, textSignatures));
}

function responsesEvents(sse: string): Array<{ type: string; response?: { output: OutputItem[] }; item?: OutputItem }> {
  return sse.split('\n\n').filter((block) => block.trim() !== '').map((block) => JSON.parse(block.split('\n')[1]?.slice('data: '.length) ?? '') as { type: string });
}

const RUNS = { numRuns: 150 };

describe('a translated answer ends with its text or tool use, with signatures before the blocks they sign', () => {
  it('Anthropic, not streamed', async () => {
    await fc.assert(fc.asyncProperty(answer, async (content) => {
      const body = anthropicMessagesCodec.encodeResponse(chatResponse(content), 'public');
      const message = await sdkAnswering(body).messages.create({ model: 'public', max_tokens: 10, messages: [{ role: 'user', content: 'q' }] });
      checkAnthropic(content, message.content, true);
    }), RUNS);
  });

  it('Anthropic, streamed (what the SDK and Claude Code rebuild)', async () => {
    await fc.assert(fc.asyncProperty(answer, async (content) => {
      const encoder = anthropicMessagesCodec.createStreamEncoder({ model: 'public' });
      const sse = streamOf(content).map((part) => encoder.encode(part)).join('') + encoder.end();
      const message = await sdkAnswering(sse).messages.stream({ model: 'public', max_tokens: 10, messages: [{ role: 'user', content: 'q' }] }).finalMessage();
      checkAnthropic(content, message.content, false);
    }), RUNS);
  });

  it('OpenAI Responses, not streamed', () => {
    fc.assert(fc.property(answer, (content) => {
      const body = JSON.parse(encodeResponsesResponse(chatResponse(content), 'public', { model: 'public', input: 'q' })) as { output: OutputItem[] };
      checkResponses(content, body.output, true);
    }), RUNS);
  });

  it('OpenAI Responses, streamed: the completed response, and items done in the order they were added', () => {
    fc.assert(fc.property(answer, (content) => {
      const encoder = new ResponsesStreamEncoder('public', echoOf({ model: 'public', input: 'q' }));
      const events = responsesEvents(streamOf(content).map((part) => encoder.encode(part)).join('') + encoder.end());
      const completed = events.at(-1);
      expect(completed?.type).toBe('response.completed');
      const output = completed?.response?.output ?? [];
      checkResponses(content, output, false);
      expect(events.filter((event) => event.type === 'response.output_item.done').map((event) => event.item)).toEqual(output);
    }), RUNS);
  });

  it('OpenAI Chat, streamed and not: one message with the text and the calls; no chunk for a part that holds nothing', () => {
    fc.assert(fc.property(answer, (content) => {
      const codec = openAIChatCodec;
      const message = (JSON.parse(codec.encodeResponse(chatResponse(content), 'public')) as { choices: Array<{ message: ChatMessage }> }).choices[0]!.message;
      const text = content.flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('');
      const calls = content.flatMap((part) => (part.type === 'tool-call' ? [part.name] : []));
      expect(message.content ?? '').toBe(text);
      expect((message.tool_calls ?? []).map((call) => call.function.name)).toEqual(calls);
      const encoder = codec.createStreamEncoder({ model: 'public' });
      const chunks = (streamOf(content).map((part) => encoder.encode(part)).join('') + encoder.end()).split('\n\n').filter((line) => line.startsWith('data: {'))
        .map((line) => JSON.parse(line.slice('data: '.length)) as { choices: Array<{ delta: { content?: string; reasoning_content?: string; tool_calls?: ChatCallDelta[] }; finish_reason: string | null }> });
      const deltas = chunks.slice(1).map((chunk) => chunk.choices[0]!).filter((choice) => choice.finish_reason === null).map((choice) => choice.delta);
      for (const delta of deltas) expect((delta.content ?? '') !== '' || (delta.reasoning_content ?? '') !== '' || (delta.tool_calls ?? []).length > 0).toBe(true);
      expect(deltas.map((delta) => delta.content ?? '').join('')).toBe(text);
      expect(deltas.flatMap((delta) => (delta.tool_calls ?? []).flatMap((call) => (call.function?.name === undefined ? [] : [call.function.name])))).toEqual(calls);
      const reasoning = content.flatMap((part) => (part.type === 'reasoning' ? [part.text] : [])).join('');
      expect(deltas.map((delta) => delta.reasoning_content ?? '').join('')).toBe(reasoning);
      expect(message.reasoning_content ?? '').toBe(reasoning);
      // A call's signature rides on it (Google's extra_content) and comes back to it, streamed and not.
      const callSignatures = (parts: readonly ContentPart[]): Array<string | undefined> => parts.flatMap((part) => (part.type === 'tool-call' ? [part.signature] : []));
      expect(callSignatures(chatTurn(message))).toEqual(callSignatures(content));
      expect(callSignatures(chatTurn(accumulated(deltas)))).toEqual(callSignatures(content));
    }), RUNS);
  });
});

type ChatCall = { id: string; type: 'function'; function: { name: string; arguments: string }; extra_content?: unknown };
type ChatCallDelta = { index: number; id?: string; type?: 'function'; function?: { name?: string; arguments?: string }; extra_content?: unknown };
type ChatMessage = { content: string | null; reasoning_content?: string; tool_calls?: ChatCall[] };

/** The message a client (the openai SDK) rebuilds from the deltas: each call's fields merged by index. */
function accumulated(deltas: Array<{ content?: string; tool_calls?: ChatCallDelta[] }>): ChatMessage {
  const calls: ChatCall[] = [];
  for (const { index, id, type, function: fn, ...rest } of deltas.flatMap((delta) => delta.tool_calls ?? [])) {
    const call = (calls[index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
    Object.assign(call, rest);
    if (id !== undefined) call.id = id;
    if (type !== undefined) call.type = type;
    if (fn?.name !== undefined) call.function.name = fn.name;
    call.function.arguments += fn?.arguments ?? '';
  }
  return { content: deltas.map((delta) => delta.content ?? '').join(''), ...(calls.length === 0 ? {} : { tool_calls: calls }) };
}

/** The assistant turn the gateway reads when the client sends the message back. */
function chatTurn(message: ChatMessage): ContentPart[] {
  const decoded = openAIChatCodec.decodeRequest({ model: 'm', messages: [{ role: 'user', content: 'q' }, { role: 'assistant', ...message }] }, {});
  return decoded.messages.find((item) => item.role === 'assistant')?.content ?? [];
}

const anthropicSignature = fc.base64String({ minLength: 8, maxLength: 24 }).map((sig) => `Eo${sig}`);

describe('the state a translated answer carries never reaches a provider that did not make it', () => {
  it('Anthropic, passed through: thinking blocks the gateway made are left out, every other block kept as it was', async () => {
    await fc.assert(fc.asyncProperty(answer, fc.array(anthropicSignature, { maxLength: 2 }), async (content, ownSignatures) => {
      const gateway = await sdkAnswering(anthropicMessagesCodec.encodeResponse(chatResponse(content), 'public')).messages.create({ model: 'public', max_tokens: 10, messages: [{ role: 'user', content: 'q' }] });
      // A later turn Anthropic answered itself, with its own signed thinking.
      const own = ownSignatures.map((sig) => ({ type: 'thinking', thinking: 'mine', signature: sig }));
      const messages = [
        { role: 'user', content: 'q' },
        ...(gateway.content.length === 0 ? [] : [{ role: 'assistant', content: gateway.content }, { role: 'user', content: 'next' }]),
        ...(own.length === 0 ? [] : [{ role: 'assistant', content: [...own, { type: 'text', text: 'ok' }] }, { role: 'user', content: 'more' }]),
      ];
      const keep = (block: { type: string; signature?: string }): boolean => block.type !== 'thinking' || !(block.signature ?? '').startsWith('ugw1.');
      const expected = messages.map((message) => (Array.isArray(message.content) ? { ...message, content: (message.content as Array<{ type: string }>).filter(keep) } : message));
      // Written again for another model name; and as the caller's own bytes, the marker written plainly or in `\u` escapes.
      const named = { model: 'claude-sonnet-4-5', max_tokens: 10, messages };
      for (const sent of [
        anthropicWire.passThroughBody({ model: 'public', max_tokens: 10, messages }, 'claude-sonnet-4-5', false, null),
        anthropicWire.passThroughBody(named, 'claude-sonnet-4-5', false, Buffer.from(JSON.stringify(named))),
        anthropicWire.passThroughBody(named, 'claude-sonnet-4-5', false, Buffer.from(JSON.stringify(named).replaceAll('ugw1.', '\\u0075gw1\\u002e'))),
      ]) {
        expect(String(sent)).not.toContain('ugw1.');
        expect((JSON.parse(String(sent)) as { messages: unknown }).messages).toEqual(expected);
      }
    }), RUNS);
  });

  it('OpenAI Responses, passed through: reasoning items the gateway made are left out, every other item kept as it was', () => {
    fc.assert(fc.property(answer, fc.array(fc.base64String({ minLength: 8, maxLength: 24 }), { maxLength: 2 }), (content, ownTokens) => {
      const output = (JSON.parse(encodeResponsesResponse(chatResponse(content), 'public', { model: 'public', input: 'q' })) as { output: OutputItem[] }).output;
      const own = ownTokens.map((token, index) => ({ id: `rs_own${index}`, type: 'reasoning', summary: [], encrypted_content: `gAAAAA${token}` }));
      const input = [{ role: 'user', content: 'q' }, ...output, ...own, { role: 'user', content: 'next' }];
      const named = { model: 'gpt-5', input, store: false };
      for (const sent of [
        responsesWire.passThroughBody({ model: 'public', input, store: false }, 'gpt-5', false, null),
        responsesWire.passThroughBody(named, 'gpt-5', false, Buffer.from(JSON.stringify(named))),
        responsesWire.passThroughBody(named, 'gpt-5', false, Buffer.from(JSON.stringify(named).replaceAll('ugw1.', '\\u0075gw1.'))),
      ]) {
        expect(String(sent)).not.toContain('ugw1.');
        expect((JSON.parse(String(sent)) as { input: unknown }).input).toEqual(input.filter((item) => !('encrypted_content' in item) || !String(item.encrypted_content).startsWith('ugw1.')));
      }
    }), RUNS);
  });

  it('a body without the marker goes as it came, byte for byte, whatever it holds', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      const body = { model: 'public', messages: [{ role: 'user', content: JSON.stringify(value).replaceAll('ugw1.', 'ugw1') }] };
      expect(anthropicWire.passThroughBody(body, 'claude', false, null)).toBe(JSON.stringify({ ...body, model: 'claude' }));
      // The caller's own bytes, naming the upstream's model already, go as the very same bytes.
      const bytes = Buffer.from(JSON.stringify({ ...body, model: 'claude' }, null, 1));
      expect(anthropicWire.passThroughBody({ ...body, model: 'claude' }, 'claude', false, bytes)).toBe(bytes);
    }), RUNS);
  });
});
