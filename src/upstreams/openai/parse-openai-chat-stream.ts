import { isJsonObject, type JsonObject } from '../../wire/json-object.js';
import { usageFromOpenAI, usageOfChatCompletion } from '../../wire/openai/usage.js';
import { eventData, SseEventSplitter } from '../../wire/sse-event-splitter.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { StreamPart } from '../../ir/stream-part.js';
import type { Usage } from '../../ir/usage.js';
import { generateToolCallId } from './generate-tool-call-id.js';
import { mapOpenAIFinishReason } from '../../wire/openai/finish-reason.js';
import { contentTextOf, reasoningTextOf } from './parse-openai-chat-response.js';
import { describeUpstreamError } from './upstream-wire-error.js';

interface ToolCallState {
  partId: string;
  toolCallId: string | null;
  name: string;
  /** Counts tool calls from 0 in order of appearance. */
  index: number;
  started: boolean;
  ended: boolean;
  /** Argument text that arrived before the name (started calls stream it as it comes). */
  pending: string;
}

type Block = { kind: 'text' | 'reasoning'; id: string };

/**
 * OpenAI chat-completion chunks → canonical stream parts, one chunk at a time. Text and reasoning deltas form
 * blocks (a new block when the kind changes, closed before a tool call starts); tool-call deltas are matched by
 * their `index` (a new `id` at a used index, as some providers send, starts a new call); the usage chunk becomes
 * a `usage` part; `finish` waits for the end of the stream (the usage chunk follows the finish chunk).
 * Part ids are stable within the stream: `text-0`, `tool-1`, … in order of appearance.
 */
export class OpenAIChatStreamParser {
  #started = false;
  #done = false;
  #sequence = 0;
  #meta = { id: '', model: '', created: 0 };
  #block: Block | null = null;
  #calls = new Map<number, ToolCallState>();
  #toolCount = 0;
  #finishReason: string | null | undefined = undefined;
  #usage: Usage | null = null;

  /** True once the stream is over ([DONE] or an error): later events are ignored. */
  get done(): boolean {
    return this.#done;
  }

  /** One SSE event (with its terminator). */
  event(event: Buffer): StreamPart[] {
    if (this.#done) return [];
    const data = eventData(event);
    if (data === null) return [];
    if (data.trim() === '[DONE]') return this.end(true);
    let chunk: unknown;
    try {
      chunk = JSON.parse(data);
    } catch {
      return []; // keep-alives and junk between chunks are skipped, as the openai SDKs do
    }
    return isJsonObject(chunk) ? this.chunk(chunk) : [];
  }

  chunk(chunk: JsonObject): StreamPart[] {
    if (this.#done) return [];
    if (chunk.error !== undefined && chunk.error !== null) return this.#fail(describeUpstreamError(chunk.error));
    // Azure's content-filter chunks carry id "" and created 0: only real values are kept.
    if (typeof chunk.id === 'string' && chunk.id !== '') {
      this.#meta = { id: chunk.id, model: typeof chunk.model === 'string' ? chunk.model : '', created: typeof chunk.created === 'number' ? chunk.created : 0 };
    }
    const parts: StreamPart[] = [];
    const choice = Array.isArray(chunk.choices) ? (chunk.choices as unknown[]).find((entry) => isJsonObject(entry) && (entry.index ?? 0) === 0) : undefined;
    if (isJsonObject(choice)) {
      const delta = isJsonObject(choice.delta) ? choice.delta : {};
      this.#textDelta('reasoning', reasoningTextOf(delta), parts);
      this.#textDelta('text', contentTextOf(delta.content), parts);
      if (typeof delta.refusal === 'string') this.#textDelta('text', delta.refusal, parts);
      if (Array.isArray(delta.tool_calls)) (delta.tool_calls as unknown[]).forEach((call, position) => this.#toolDelta(call, position, parts));
      if (isJsonObject(delta.function_call)) this.#toolDelta({ index: 0, ...delta.function_call, function: delta.function_call }, 0, parts);
      if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') {
        this.#finishReason = choice.finish_reason;
        this.#closeAll(parts);
      }
    }
    // Groq puts the usage of a stream in `x_groq.usage` of its last chunk.
    const usage = usageOfChatCompletion(chunk) ?? (isJsonObject(chunk.x_groq) ? usageFromOpenAI(chunk.x_groq.usage) : null);
    if (usage !== null) {
      this.#usage = usage;
      parts.push(...this.#start(), { type: 'usage', usage });
    }
    return parts;
  }

  /**
   * The end of the stream: `[DONE]`, or the body ending. A finish reason or [DONE] completes the response; a body
   * that ends with neither was cut off — an error part, or a GatewayError when nothing was produced yet (so the
   * relay may still try another channel).
   */
  end(sawDone: boolean): StreamPart[] {
    if (this.#done) return [];
    if (!sawDone && this.#finishReason === undefined) {
      return this.#fail({ status: 502, message: 'The upstream stream ended before the response was complete.' });
    }
    this.#done = true;
    const parts = [...this.#start()];
    this.#closeAll(parts);
    const reason = mapOpenAIFinishReason(this.#finishReason ?? null, this.#toolCount > 0);
    if (this.#finishReason === undefined && reason.unified === 'other') reason.unified = 'stop';
    parts.push({ type: 'finish', reason, usage: this.#usage });
    return parts;
  }

  #fail(error: { status: number; message: string }): StreamPart[] {
    this.#done = true;
    if (!this.#started) throw new GatewayError('upstream_error', error.message);
    return [{ type: 'error', status: error.status, code: 'upstream_error', message: error.message }];
  }

  #nextId(kind: string): string {
    const id = `${kind}-${this.#sequence}`;
    this.#sequence += 1;
    return id;
  }

  #start(): StreamPart[] {
    if (this.#started) return [];
    this.#started = true;
    const meta = this.#meta;
    return [{ type: 'response-start', id: meta.id, model: meta.model, created: meta.created === 0 ? Math.floor(Date.now() / 1000) : meta.created }];
  }

  #closeBlock(parts: StreamPart[]): void {
    const block = this.#block;
    if (block === null) return;
    this.#block = null;
    parts.push(block.kind === 'text' ? { type: 'text-end', id: block.id } : { type: 'reasoning-end', id: block.id });
  }

  #textDelta(kind: Block['kind'], delta: string, parts: StreamPart[]): void {
    if (delta === '') return;
    parts.push(...this.#start());
    if (this.#block?.kind !== kind) {
      this.#closeBlock(parts);
      const id = this.#nextId(kind);
      this.#block = { kind, id };
      parts.push(kind === 'text' ? { type: 'text-start', id } : { type: 'reasoning-start', id });
    }
    const id = (this.#block as Block).id;
    parts.push(kind === 'text' ? { type: 'text-delta', id, delta } : { type: 'reasoning-delta', id, delta });
  }

  #toolDelta(raw: unknown, position: number, parts: StreamPart[]): void {
    if (!isJsonObject(raw)) return;
    const key = typeof raw.index === 'number' ? raw.index : position;
    const id = typeof raw.id === 'string' && raw.id !== '' ? raw.id : null;
    const fn = isJsonObject(raw.function) ? raw.function : {};
    let call = this.#calls.get(key);
    if (call !== undefined && id !== null && call.toolCallId !== null && id !== call.toolCallId) {
      this.#endCall(call, parts);
      call = undefined;
    }
    if (call === undefined) {
      call = { partId: this.#nextId('tool'), toolCallId: id, name: '', index: this.#toolCount, started: false, ended: false, pending: '' };
      this.#toolCount += 1;
      this.#calls.set(key, call);
    }
    if (call.ended) return; // a fragment after the finish chunk closed the call
    call.toolCallId ??= id;
    if (typeof fn.name === 'string' && fn.name !== '' && !call.started) call.name += fn.name;
    const args = typeof fn.arguments === 'string' ? fn.arguments : '';
    if (!call.started) {
      call.pending += args;
      if (call.name !== '') this.#startCall(call, parts);
    } else if (args !== '') {
      parts.push({ type: 'tool-input-delta', id: call.partId, delta: args });
    }
  }

  #startCall(call: ToolCallState, parts: StreamPart[]): void {
    parts.push(...this.#start());
    this.#closeBlock(parts);
    call.started = true;
    call.toolCallId ??= generateToolCallId();
    parts.push({ type: 'tool-input-start', id: call.partId, toolCallId: call.toolCallId, toolName: call.name, index: call.index });
    if (call.pending !== '') parts.push({ type: 'tool-input-delta', id: call.partId, delta: call.pending });
    call.pending = '';
  }

  #endCall(call: ToolCallState, parts: StreamPart[]): void {
    if (call.ended) return;
    if (!call.started) this.#startCall(call, parts);
    call.ended = true;
    parts.push({ type: 'tool-input-end', id: call.partId });
  }

  #closeAll(parts: StreamPart[]): void {
    this.#closeBlock(parts);
    for (const call of [...this.#calls.values()].sort((a, b) => a.index - b.index)) this.#endCall(call, parts);
  }
}

/** A 2xx chat-completions SSE body → canonical stream parts (see StreamPart for the order). */
export async function* parseOpenAIChatStream(body: AsyncIterable<Buffer>): AsyncIterable<StreamPart> {
  const splitter = new SseEventSplitter();
  const parser = new OpenAIChatStreamParser();
  for await (const chunk of body) {
    for (const event of splitter.push(chunk)) {
      yield* parser.event(event);
      if (parser.done) return;
    }
  }
  const rest = splitter.flush();
  if (rest !== null) yield* parser.event(rest);
  yield* parser.end(false);
}
