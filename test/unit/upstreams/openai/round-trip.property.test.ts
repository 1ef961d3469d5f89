/**
 * Round trips between the OpenAI codec (client side) and the OpenAI adapter (upstream side), over random canonical
 * values. What the OpenAI wire cannot carry is normalised away in the expected value, and each rule says why:
 *
 * requests (adapter.buildChatRequest → codec.decodeRequest)
 *   - the system parts arrive as one part (joined by a blank line: one system message);
 *   - assistant text parts arrive joined, empty text dropped; reasoning from earlier turns is not sent (no input field);
 *   - tool-call arguments '' arrive as '{}' (OpenAI arguments are JSON text);
 *   - tool results arrive in `tool` messages, consecutive ones merged into one turn, text joined into one part;
 *     those carried by a user turn (Anthropic's shape) come out in a tool turn before it; `isError` is not carried;
 *   - a PDF without a file name gets `document.pdf`; the model is the upstream model name;
 *   - tool_choice and parallel_tool_calls exist only with tools.
 * responses (codec.encodeResponse → adapter.parseChatResponse)
 *   - reasoning parts arrive as one (reasoning_content), text parts as one, then the tool calls; signatures are lost;
 *   - the id gains the chatcmpl- prefix, the model is the public one, the raw finish reason is OpenAI's value;
 *     `error`/`other` read as stop, and a turn with tool calls ends in tool-calls.
 * streams (codec.createStreamEncoder → bytes cut anywhere → adapter.parseChatStream), compared as transcripts:
 *   - block boundaries are not on the wire: adjacent deltas of one kind form one block, empty deltas vanish;
 *   - a tool call that streamed no arguments has '{}'; part ids are the parser's own;
 *   - usage arrives only when asked for (include_usage), as the finish's usage (or the last usage part);
 *   - an error before any content is thrown (the relay may retry), after content it is an error part whose
 *     message is the gateway's own (upstream messages are never relayed).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { openAIChatCodec, openAIChatCodecFor } from '../../../../src/codecs/openai-chat/index.js';
import { GatewayError } from '../../../../src/errors/gateway-error.js';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import type { ChatResponse } from '../../../../src/ir/chat-response.js';
import type { FinishReason, UnifiedFinishReason } from '../../../../src/ir/finish-reason.js';
import type { ContentPart, Message, TextPart, ToolResultPart } from '../../../../src/ir/message.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import { emptyUsage } from '../../../../src/ir/usage.js';
import { OpenAIAdapter } from '../../../../src/upstreams/openai/openai-adapter.js';
import { chatRequest, chatResponse, streamScenario } from '../../openai/round-trip-arbitraries.js';
import { bodyOf, channel, collect, splitAt, unusedTransport } from '../../openai/openai-test-helpers.js';

const adapter = new OpenAIAdapter(unusedTransport);
const RUNS = { numRuns: 100 };

function joined(parts: readonly ContentPart[]): string {
  return parts.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function expectedMessages(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  const addResults = (results: ToolResultPart[]): void => {
    if (results.length === 0) return;
    const normalised = results.map(({ isError: _isError, ...result }) => ({ ...result, content: [{ type: 'text', text: joined(result.content) } as TextPart] }));
    const last = out.at(-1);
    if (last?.role === 'tool') last.content.push(...normalised);
    else out.push({ role: 'tool', content: normalised });
  };
  for (const message of messages) {
    if (message.role === 'assistant') {
      const text = joined(message.content);
      const calls = message.content.flatMap((part) => (part.type === 'tool-call' ? [{ ...part, argumentsJson: part.argumentsJson === '' ? '{}' : part.argumentsJson }] : []));
      out.push({ role: 'assistant', content: [...(text === '' ? [] : [{ type: 'text', text } as TextPart]), ...calls] });
      continue;
    }
    addResults(message.content.filter((part): part is ToolResultPart => part.type === 'tool-result'));
    if (message.role === 'tool') continue;
    const rest = message.content.filter((part) => part.type !== 'tool-result').map((part) =>
      part.type === 'file' && part.source.mediaType === 'application/pdf' && part.filename === undefined ? { ...part, filename: 'document.pdf' } : part);
    if (rest.length > 0) out.push({ role: 'user', content: rest });
  }
  return out;
}

function expectedRequest(request: ChatRequest, upstreamModel: string): Record<string, unknown> {
  const system = request.system.map((part) => part.text).join('\n\n');
  const hasTools = (request.tools ?? []).length > 0;
  const format = request.responseFormat;
  return {
    ...request,
    model: upstreamModel,
    system: system === '' ? [] : [{ type: 'text', text: system }],
    messages: expectedMessages(request.messages),
    toolChoice: hasTools ? request.toolChoice : undefined,
    parallelToolCalls: hasTools ? request.parallelToolCalls : undefined,
    responseFormat: format?.kind === 'json-schema' ? { ...format, name: format.name ?? 'response' } : format,
    extensions: {},
    warnings: [],
  };
}

const OPENAI_REASONS: Record<UnifiedFinishReason, string> = {
  stop: 'stop', length: 'length', 'tool-calls': 'tool_calls', 'content-filter': 'content_filter', error: 'stop', other: 'stop',
};

function expectedReason(unified: UnifiedFinishReason, hasToolCalls: boolean): FinishReason {
  const raw = hasToolCalls && OPENAI_REASONS[unified] === 'stop' ? 'tool_calls' : OPENAI_REASONS[unified];
  const back: Record<string, UnifiedFinishReason> = { stop: 'stop', length: 'length', tool_calls: 'tool-calls', content_filter: 'content-filter' };
  return { unified: back[raw] === 'stop' && hasToolCalls ? 'tool-calls' : (back[raw] as UnifiedFinishReason), raw };
}

function expectedResponse(response: ChatResponse): ChatResponse {
  const reasoning = response.content.map((part) => (part.type === 'reasoning' ? part.text : '')).join('');
  const text = joined(response.content);
  const calls = response.content.flatMap((part) => (part.type === 'tool-call' ? [{ ...part, argumentsJson: part.argumentsJson === '' ? '{}' : part.argumentsJson }] : []));
  const content: ContentPart[] = [];
  if (reasoning !== '') content.push({ type: 'reasoning', text: reasoning });
  if (text !== '') content.push({ type: 'text', text });
  content.push(...calls);
  return {
    ...response,
    id: response.id.startsWith('chatcmpl-') ? response.id : `chatcmpl-${response.id}`,
    model: 'public-model',
    content,
    finishReason: expectedReason(response.finishReason.unified, calls.length > 0),
  };
}

type TranscriptBlock = { kind: 'text' | 'reasoning'; text: string } | { kind: 'tool'; toolCallId: string; toolName: string; index: number; arguments: string };

interface Transcript {
  start: { id: string; model: string; created: number } | null;
  blocks: TranscriptBlock[];
  end: { type: 'finish'; reason: FinishReason; usage: unknown } | { type: 'error'; status: number; code: string; message: string } | null;
}

/** What a stream says, independent of how its blocks were cut: text by kind in order, tool calls with their arguments. */
function transcriptOf(parts: readonly StreamPart[]): Transcript {
  const transcript: Transcript = { start: null, blocks: [], end: null };
  const tools = new Map<string, Extract<TranscriptBlock, { kind: 'tool' }>>();
  let open = null as Extract<TranscriptBlock, { kind: 'text' | 'reasoning' }> | null;
  for (const part of parts) {
    switch (part.type) {
      case 'response-start':
        transcript.start = { id: part.id, model: part.model, created: part.created };
        break;
      case 'text-delta':
      case 'reasoning-delta': {
        if (part.delta === '') break;
        const kind = part.type === 'text-delta' ? 'text' : 'reasoning';
        if (open?.kind !== kind) {
          open = { kind, text: '' };
          transcript.blocks.push(open);
        }
        open.text += part.delta;
        break;
      }
      case 'tool-input-start': {
        open = null;
        const block = { kind: 'tool' as const, toolCallId: part.toolCallId, toolName: part.toolName, index: part.index, arguments: '' };
        tools.set(part.id, block);
        transcript.blocks.push(block);
        break;
      }
      case 'tool-input-delta': {
        const block = tools.get(part.id);
        if (block !== undefined) block.arguments += part.delta;
        break;
      }
      case 'finish':
        transcript.end = { type: 'finish', reason: part.reason, usage: part.usage };
        break;
      case 'error':
        transcript.end = { ...part };
        break;
      default:
        break;
    }
  }
  return transcript;
}

/** The parser's output is a well-formed canonical stream: one start first, deltas inside their blocks, one end last. */
function expectWellFormed(parts: readonly StreamPart[]): void {
  expect(parts[0]?.type).toBe('response-start');
  const open = new Set<string>();
  const seen = new Set<string>();
  parts.slice(1, -1).forEach((part) => {
    expect(['response-start', 'finish', 'error']).not.toContain(part.type);
    if (part.type.endsWith('-start') && 'id' in part) {
      expect(seen.has(part.id)).toBe(false);
      seen.add(part.id);
      open.add(part.id);
    } else if (part.type.endsWith('-delta') && 'id' in part) {
      expect(open.has(part.id)).toBe(true);
    } else if (part.type.endsWith('-end') && 'id' in part) {
      expect(open.delete(part.id)).toBe(true);
    }
  });
  const last = parts.at(-1);
  expect(['finish', 'error']).toContain(last?.type);
  if (last?.type === 'finish') expect(open.size).toBe(0);
}

describe('round trips between the OpenAI codec and adapter', () => {
  it('canonical requests survive adapter.buildChatRequest → codec.decodeRequest', () => {
    fc.assert(fc.property(chatRequest, (request) => {
      const upstream = adapter.buildChatRequest(channel('openai-compatible'), 'sk', structuredClone(request), 'gpt-4o');
      const decoded = openAIChatCodec.decodeRequest(JSON.parse(String(upstream.body ?? '')) as Record<string, unknown>, {});
      expect(decoded).toEqual(expectedRequest(request, 'gpt-4o'));
    }), RUNS);
  });

  it('for OpenAI reasoning models, only what they take survives', () => {
    fc.assert(fc.property(chatRequest.filter((request) => request.responseFormat?.kind !== 'json'), (request) => {
      const upstream = adapter.buildChatRequest(channel('openai'), 'sk', structuredClone(request), 'o3');
      const decoded = openAIChatCodec.decodeRequest(JSON.parse(String(upstream.body ?? '')) as Record<string, unknown>, {});
      expect(decoded).toEqual({
        ...expectedRequest(request, 'o3'),
        temperature: request.temperature === 1 ? 1 : undefined,
        topP: undefined,
        presencePenalty: undefined,
        frequencyPenalty: undefined,
        stopSequences: undefined,
      });
    }), RUNS);
  });

  it('canonical responses survive codec.encodeResponse → adapter.parseChatResponse', () => {
    fc.assert(fc.property(chatResponse, (response) => {
      const body = Buffer.from(openAIChatCodec.encodeResponse(response, 'public-model'));
      expect(adapter.parseChatResponse(body, {} as ChatRequest)).toEqual(expectedResponse(response));
    }), RUNS);
  });

  it('canonical streams survive codec.createStreamEncoder → bytes cut anywhere → adapter.parseChatStream', async () => {
    await fc.assert(fc.asyncProperty(streamScenario, async ({ parts, includeUsage, cuts }) => {
      const encoder = openAIChatCodecFor({ includeUsage }).createStreamEncoder({ model: 'public-model' });
      const bytes = Buffer.from(parts.map((part) => encoder.encode(part)).join('') + encoder.end(), 'utf8');
      const body = bodyOf(splitAt(bytes, cuts.map((cut) => cut % Math.max(bytes.length, 1))));
      const sent = transcriptOf(parts);
      const hasToolCalls = sent.blocks.some((block) => block.kind === 'tool');
      const last = parts.at(-1);
      if (last?.type === 'error' && sent.blocks.length === 0) {
        await expect(collect(adapter.parseChatStream(body, {} as ChatRequest))).rejects.toBeInstanceOf(GatewayError);
        return;
      }
      const received = await collect(adapter.parseChatStream(body, {} as ChatRequest));
      expectWellFormed(received);
      const start = parts[0] as Extract<StreamPart, { type: 'response-start' }>;
      const lastUsage = [...parts].reverse().find((part): part is Extract<StreamPart, { type: 'usage' }> => part.type === 'usage')?.usage ?? null;
      const expected: Transcript = {
        start: { id: `chatcmpl-${start.id}`, model: 'public-model', created: start.created },
        blocks: sent.blocks.map((block) => (block.kind === 'tool' && block.arguments === '' ? { ...block, arguments: '{}' } : block)),
        end: last?.type === 'finish'
          ? { type: 'finish', reason: expectedReason(last.reason.unified, hasToolCalls), usage: includeUsage ? (last.usage ?? lastUsage ?? emptyUsage()) : null }
          : { type: 'error', status: 502, code: 'upstream_error', message: 'The upstream provider reported an error (upstream_error).' },
      };
      expect(transcriptOf(received)).toEqual(expected);
    }), RUNS);
  });
});
