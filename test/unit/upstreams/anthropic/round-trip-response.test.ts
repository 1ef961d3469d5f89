/**
 * Properties: a canonical response survives codec.encodeResponse → adapter.parseChatResponse, and a canonical
 * part sequence survives codec.createStreamEncoder → bytes (split anywhere) → adapter.parseChatStream.
 *
 * Normalisation:
 * - the model becomes the public model the codec names; `created` is the parse time; the id gains `msg_`;
 * - finish reasons become what Anthropic's stop_reason can say (see `throughAnthropic`);
 * - usage: input total = uncached + cache read + cache write, text output = output - reasoning;
 * - stream: ids become Anthropic block indexes; deltas of a block are joined, empty deltas vanish; interleaved
 *   tool inputs come back one block after the other in start order; a tool call without input reads back `{}`;
 *   a signature on a tool-input start (Gemini's) comes back, marked `ugw1.n.`, as the signature of the thinking
 *   block right before the call: the unsigned thinking written just before it, else an empty one; a signature at a
 *   text's end (known only after its text) is not carried; blocks with nothing to show (text without text,
 *   thinking with neither text nor signature) are not written; `usage` parts are compared through the finish.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { anthropicMessagesCodec } from '../../../../src/codecs/anthropic-messages/index.js';
import type { ChatResponse } from '../../../../src/ir/chat-response.js';
import type { FinishReason } from '../../../../src/ir/finish-reason.js';
import type { StreamPart } from '../../../../src/ir/stream-part.js';
import type { Usage } from '../../../../src/ir/usage.js';
import { AnthropicAdapter } from '../../../../src/upstreams/anthropic/anthropic-adapter.js';
import type { UpstreamTransport } from '../../../../src/upstreams/upstream-adapter.js';
import { argumentsJson, chatResponse, finishReason, text, usage } from '../../anthropic/arbitraries.js';
import { chatRequest, chunked, collect, joinDeltas } from '../../anthropic/helpers.js';

const transport: UpstreamTransport = { send: () => Promise.reject(new Error('not used')) };
const adapter = new AnthropicAdapter(transport);

const ANTHROPIC = new Set(['end_turn', 'max_tokens', 'stop_sequence', 'tool_use', 'pause_turn', 'refusal', 'model_context_window_exceeded']);
const UNIFIED_TO_ANTHROPIC = { stop: 'end_turn', length: 'max_tokens', 'tool-calls': 'tool_use', 'content-filter': 'refusal', error: 'end_turn', other: 'end_turn' } as const;
const ANTHROPIC_TO_UNIFIED: Record<string, FinishReason['unified']> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool-calls',
  refusal: 'content-filter',
  pause_turn: 'other',
};

/** The finish reason after a trip through Anthropic's stop_reason: its raw value is kept, tool calls say tool_use. */
function throughAnthropic(reason: FinishReason, hasToolCalls: boolean): FinishReason {
  let raw: string;
  if (reason.raw !== null && ANTHROPIC.has(reason.raw)) raw = hasToolCalls && reason.raw === 'end_turn' ? 'tool_use' : reason.raw;
  else if (hasToolCalls && ['stop', 'tool-calls', 'other'].includes(reason.unified)) raw = 'tool_use';
  else raw = UNIFIED_TO_ANTHROPIC[reason.unified];
  return { unified: ANTHROPIC_TO_UNIFIED[raw] ?? 'other', raw };
}

describe('response round trip: codec.encodeResponse → adapter.parseChatResponse', () => {
  it('keeps content, finish reason and usage', () => {
    fc.assert(
      fc.property(chatResponse, (original: ChatResponse) => {
        const parsed = adapter.parseChatResponse(Buffer.from(anthropicMessagesCodec.encodeResponse(original, 'public-model')), chatRequest());
        const hasToolCalls = original.content.some((part) => part.type === 'tool-call');
        expect(parsed).toEqual({ ...original, model: 'public-model', created: parsed.created, finishReason: throughAnthropic(original.finishReason, hasToolCalls) });
      }),
      { numRuns: 100 },
    );
  });
});

type Block =
  | { kind: 'text'; deltas: string[]; signature?: string }
  | { kind: 'reasoning'; deltas: string[]; signature?: string }
  | { kind: 'redacted'; data: string }
  | { kind: 'tool'; toolCallId: string; toolName: string; deltas: string[] };

const deltas = fc.array(fc.oneof(text, fc.constant('')), { maxLength: 4 });
const toolDeltas = fc.oneof(fc.constant([] as string[]), argumentsJson.chain((json) => fc.array(fc.nat(json.length), { maxLength: 3 }).map((cuts) => split(json, cuts))));
const block: fc.Arbitrary<Block> = fc.oneof(
  fc.record({ kind: fc.constant('text' as const), deltas, signature: fc.option(text, { nil: undefined }) }, { requiredKeys: ['kind', 'deltas'] }),
  fc.record({ kind: fc.constant('reasoning' as const), deltas, signature: fc.option(fc.stringMatching(/^[A-Za-z0-9+/]{4,20}$/), { nil: undefined }) }, { requiredKeys: ['kind', 'deltas'] }),
  fc.record({ kind: fc.constant('redacted' as const), data: fc.stringMatching(/^[A-Za-z0-9+/]{4,20}$/) }),
  fc.record({ kind: fc.constant('tool' as const), toolCallId: fc.stringMatching(/^toolu_[a-z0-9]{4}$/), toolName: fc.stringMatching(/^[a-z_]{1,8}$/), deltas: toolDeltas }),
);

function split(value: string, cuts: number[]): string[] {
  const points = [...new Set([0, ...cuts, value.length])].sort((a, b) => a - b);
  return points.slice(1).map((end, index) => value.slice(points[index], end));
}

interface Scenario {
  blocks: Block[];
  /** Sort keys that interleave the deltas of adjacent tool blocks. */
  order: number[];
  early: Usage | null;
  final: Usage | null;
  reason: FinishReason;
  error: { status: number; message: string } | null;
  cuts: number[];
}

const scenario: fc.Arbitrary<Scenario> = fc.record({
  blocks: fc.array(block, { maxLength: 5 }),
  order: fc.array(fc.nat(9), { minLength: 40, maxLength: 40 }),
  early: fc.option(usage, { nil: null }),
  final: fc.option(usage, { nil: null }),
  reason: finishReason,
  error: fc.option(fc.record({ status: fc.constantFrom(400, 429, 500, 502, 503, 529), message: fc.stringMatching(/^[A-Za-z ]{1,20}$/) }), { nil: null }),
  cuts: fc.array(fc.nat(4000), { maxLength: 30 }),
});

/** The canonical parts of a scenario; runs of tool blocks start together and interleave their deltas. */
function partsOf(s: Scenario): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'response-start', id: 'msg_stream', model: 'claude-upstream', created: 1 }];
  if (s.early !== null) parts.push({ type: 'usage', usage: s.early });
  let toolIndex = 0;
  let sortKey = 0;
  for (let index = 0; index < s.blocks.length; ) {
    const current = s.blocks[index]!;
    const id = `b${index}`;
    if (current.kind === 'tool') {
      const run: Array<{ id: string; block: Extract<Block, { kind: 'tool' }> }> = [];
      while (s.blocks[index]?.kind === 'tool') {
        run.push({ id: `b${index}`, block: s.blocks[index] as Extract<Block, { kind: 'tool' }> });
        index++;
      }
      for (const item of run) parts.push({ type: 'tool-input-start', id: item.id, toolCallId: item.block.toolCallId, toolName: item.block.toolName, index: toolIndex++, signature: 'gemini' });
      // Each block's deltas keep their order (rising keys); across blocks they interleave.
      const interleaved = run.flatMap((item) => {
        let key = 0;
        return item.block.deltas.map((delta) => ({ id: item.id, delta, key: (key += 1 + (s.order[sortKey++ % s.order.length] ?? 0)) }));
      });
      interleaved.sort((a, b) => a.key - b.key);
      for (const item of interleaved) parts.push({ type: 'tool-input-delta', id: item.id, delta: item.delta });
      for (const item of [...run].reverse()) parts.push({ type: 'tool-input-end', id: item.id });
      continue;
    }
    index++;
    if (current.kind === 'redacted') {
      parts.push({ type: 'reasoning-start', id }, { type: 'reasoning-end', id, redactedData: current.data });
    } else if (current.kind === 'text') {
      parts.push({ type: 'text-start', id }, ...current.deltas.map((delta): StreamPart => ({ type: 'text-delta', id, delta })), { type: 'text-end', id, ...(current.signature === undefined ? {} : { signature: current.signature }) });
    } else {
      parts.push({ type: 'reasoning-start', id }, ...current.deltas.map((delta): StreamPart => ({ type: 'reasoning-delta', id, delta })), { type: 'reasoning-end', id, ...(current.signature === undefined ? {} : { signature: current.signature }) });
    }
  }
  if (s.error !== null) parts.push({ type: 'error', status: s.error.status, code: 'upstream_error', message: s.error.message });
  else parts.push({ type: 'finish', reason: s.reason, usage: s.final });
  return parts;
}

const ZERO: Usage = { input: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 }, output: { total: 0, text: 0, reasoning: 0 } };
const ERROR_TYPES: Record<number, string> = { 400: 'invalid_request_error', 429: 'rate_limit_error', 500: 'api_error', 502: 'api_error', 503: 'api_error', 529: 'overloaded_error' };

/** What the parser gives back: blocks in start order at their Anthropic indexes, deltas joined. */
function expectedParts(s: Scenario): StreamPart[] {
  const parts: StreamPart[] = [{ type: 'response-start', id: 'msg_stream', model: 'public-model', created: 0 }];
  let toolIndex = 0;
  let next = 0;
  /** Unsigned thinking just written, whose end waits: the next call's signature may become its signature. */
  let unsigned: { id: string; text: string } | null = null;
  const release = (signature?: string): void => {
    if (unsigned === null) return;
    const { id, text: thought } = unsigned;
    unsigned = null;
    parts.push({ type: 'reasoning-start', id }, { type: 'reasoning-delta', id, delta: thought }, { type: 'reasoning-end', id, ...(signature === undefined ? {} : { signature }) });
  };
  s.blocks.forEach((current) => {
    const joined = current.kind === 'redacted' ? '' : current.deltas.join('');
    switch (current.kind) {
      case 'text': {
        if (joined === '') break;
        release();
        const id = String(next++);
        parts.push({ type: 'text-start', id }, { type: 'text-delta', id, delta: joined }, { type: 'text-end', id });
        break;
      }
      case 'reasoning': {
        const signed = current.signature !== undefined && current.signature !== '';
        if (joined === '' && !signed) break;
        release();
        const id = String(next++);
        if (!signed) unsigned = { id, text: joined };
        else parts.push({ type: 'reasoning-start', id }, ...(joined === '' ? [] : [{ type: 'reasoning-delta' as const, id, delta: joined }]), { type: 'reasoning-end', id, signature: current.signature as string });
        break;
      }
      case 'redacted': {
        release();
        const id = String(next++);
        parts.push({ type: 'reasoning-start', id }, { type: 'reasoning-end', id, redactedData: current.data });
        break;
      }
      case 'tool': {
        if (unsigned !== null) release('ugw1.n.gemini');
        else {
          const carrier = String(next++);
          parts.push({ type: 'reasoning-start', id: carrier }, { type: 'reasoning-end', id: carrier, signature: 'ugw1.n.gemini' });
        }
        const id = String(next++);
        parts.push(
          { type: 'tool-input-start', id, toolCallId: current.toolCallId, toolName: current.toolName, index: toolIndex++ },
          { type: 'tool-input-delta', id, delta: joined === '' ? '{}' : joined },
          { type: 'tool-input-end', id },
        );
        break;
      }
    }
  });
  release();
  if (s.error !== null) {
    const type = ERROR_TYPES[s.error.status]!;
    parts.push(type === 'overloaded_error'
      ? { type: 'error', status: 503, code: 'upstream_unavailable', message: `Upstream overloaded: ${s.error.message}` }
      : { type: 'error', status: 502, code: 'upstream_error', message: `Upstream ${type}: ${s.error.message}` });
  } else {
    const hasToolCalls = s.blocks.some((item) => item.kind === 'tool');
    parts.push({ type: 'finish', reason: throughAnthropic(s.reason, hasToolCalls), usage: s.final ?? s.early ?? ZERO });
  }
  return parts;
}

describe('stream round trip: codec.createStreamEncoder → bytes → adapter.parseChatStream', () => {
  it('keeps blocks, finish and usage wherever the bytes are split', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const encoder = anthropicMessagesCodec.createStreamEncoder({ model: 'public-model' });
        const sse = partsOf(s).map((part) => encoder.encode(part)).join('') + encoder.end();
        const parsed = await collect(adapter.parseChatStream(chunked(sse, s.cuts), chatRequest()));
        const comparable = joinDeltas(parsed.filter((part) => part.type !== 'usage')).map((part) => (part.type === 'response-start' ? { ...part, created: 0 } : part));
        expect(comparable).toEqual(expectedParts(s));
      }),
      { numRuns: 100 },
    );
  });
});
