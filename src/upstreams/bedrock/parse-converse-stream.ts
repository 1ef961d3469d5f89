import { randomUUID } from 'node:crypto';
import { GatewayError } from '../../errors/gateway-error.js';
import type { StreamPart } from '../../ir/stream-part.js';
import type { Usage } from '../../ir/usage.js';
import { EventStreamDecoder, type EventStreamMessage } from './event-stream-decoder.js';
import { converseResponseId } from './parse-converse-response.js';
import { mapConverseStopReason } from '../../wire/bedrock/stop-reason.js';
import { usageFromConverse } from '../../wire/bedrock/usage.js';
import { isJsonObject, type JsonObject } from '../../wire/json-object.js';

/** Exceptions Bedrock sends inside a stream, by their `:exception-type`, with the HTTP status they stand for. */
const EXCEPTION_STATUS: Record<string, number> = {
  throttlingException: 429,
  serviceUnavailableException: 503,
  internalServerException: 500,
  modelStreamErrorException: 502,
  validationException: 400,
};

interface Block {
  kind: 'text' | 'reasoning' | 'tool';
  id: string;
  signature?: string;
  redactedData?: string;
}

/**
 * ConverseStream events → canonical stream parts. Blocks are keyed by `contentBlockIndex`: a tool block opens with
 * `contentBlockStart`, text and reasoning blocks with their first delta; `contentBlockStop` closes one. The
 * finish waits for the end of the stream, as `metadata` (with the usage) follows `messageStop`.
 */
export class ConverseStreamParser {
  #started = false;
  #done = false;
  #sequence = 0;
  #toolCount = 0;
  #blocks = new Map<number, Block>();
  #stopReason: unknown = undefined;
  #usage: Usage | null = null;

  constructor(private readonly model: string) {}

  get done(): boolean {
    return this.#done;
  }

  message(message: EventStreamMessage): StreamPart[] {
    if (this.#done) return [];
    const messageType = message.headers[':message-type'];
    if (messageType === 'exception' || messageType === 'error') {
      const type = String(message.headers[':exception-type'] ?? message.headers[':error-code'] ?? 'error');
      let text = typeof message.headers[':error-message'] === 'string' ? (message.headers[':error-message'] as string) : '';
      try {
        const payload = JSON.parse(message.payload.toString('utf8')) as unknown;
        if (isJsonObject(payload) && typeof payload.message === 'string') text = payload.message;
      } catch {
        // the header's message stands
      }
      return this.#fail(EXCEPTION_STATUS[type] ?? 502, `Upstream stream error (${type})${text === '' ? '' : `: ${text}`}`);
    }
    let payload: unknown;
    try {
      payload = JSON.parse(message.payload.toString('utf8'));
    } catch {
      return [];
    }
    if (!isJsonObject(payload)) return [];
    const parts: StreamPart[] = [];
    switch (message.headers[':event-type']) {
      case 'messageStart':
        parts.push(...this.#start());
        break;
      case 'contentBlockStart':
        this.#blockStart(payload, parts);
        break;
      case 'contentBlockDelta':
        this.#blockDelta(payload, parts);
        break;
      case 'contentBlockStop':
        this.#blockStop(typeof payload.contentBlockIndex === 'number' ? payload.contentBlockIndex : 0, parts);
        break;
      case 'messageStop':
        this.#stopReason = payload.stopReason;
        this.#closeAll(parts);
        break;
      case 'metadata': {
        const usage = usageFromConverse(payload.usage);
        if (usage !== null) {
          this.#usage = usage;
          parts.push(...this.#start(), { type: 'usage', usage });
        }
        break;
      }
      default:
        break;
    }
    return parts;
  }

  /** The body ended: complete when `messageStop` came, else the stream was cut. */
  end(): StreamPart[] {
    if (this.#done) return [];
    if (this.#stopReason === undefined) return this.#fail(502, 'The upstream stream ended before the response was complete.');
    this.#done = true;
    const parts = [...this.#start()];
    this.#closeAll(parts);
    parts.push({ type: 'finish', reason: mapConverseStopReason(this.#stopReason, this.#toolCount > 0), usage: this.#usage });
    return parts;
  }

  #fail(status: number, message: string): StreamPart[] {
    this.#done = true;
    if (!this.#started) throw new GatewayError('upstream_error', message, { status: status === 429 ? 503 : 502 });
    return [{ type: 'error', status, code: 'upstream_error', message }];
  }

  #start(): StreamPart[] {
    if (this.#started) return [];
    this.#started = true;
    return [{ type: 'response-start', id: converseResponseId(), model: this.model, created: Math.floor(Date.now() / 1000) }];
  }

  #nextId(kind: string): string {
    const id = `${kind}-${this.#sequence}`;
    this.#sequence += 1;
    return id;
  }

  #blockStart(payload: JsonObject, parts: StreamPart[]): void {
    const index = typeof payload.contentBlockIndex === 'number' ? payload.contentBlockIndex : 0;
    const start = isJsonObject(payload.start) ? payload.start : {};
    if (!isJsonObject(start.toolUse)) return;
    parts.push(...this.#start());
    this.#closeOpenText(parts);
    const id = this.#nextId('tool');
    const toolCallId = typeof start.toolUse.toolUseId === 'string' && start.toolUse.toolUseId !== '' ? start.toolUse.toolUseId : `tooluse_${randomUUID().replace(/-/g, '').slice(0, 22)}`;
    const toolName = typeof start.toolUse.name === 'string' ? start.toolUse.name : '';
    this.#blocks.set(index, { kind: 'tool', id });
    parts.push({ type: 'tool-input-start', id, toolCallId, toolName, index: this.#toolCount });
    this.#toolCount += 1;
  }

  /** Text and reasoning blocks never interleave: one opening closes another that is still open. */
  #closeOpenText(parts: StreamPart[]): void {
    for (const [index, block] of this.#blocks) if (block.kind !== 'tool') this.#blockStop(index, parts);
  }

  #textBlock(index: number, kind: 'text' | 'reasoning', parts: StreamPart[]): Block {
    let block = this.#blocks.get(index);
    if (block === undefined) {
      parts.push(...this.#start());
      this.#closeOpenText(parts);
      block = { kind, id: this.#nextId(kind) };
      this.#blocks.set(index, block);
      parts.push(kind === 'text' ? { type: 'text-start', id: block.id } : { type: 'reasoning-start', id: block.id });
    }
    return block;
  }

  #blockDelta(payload: JsonObject, parts: StreamPart[]): void {
    const index = typeof payload.contentBlockIndex === 'number' ? payload.contentBlockIndex : 0;
    const delta = isJsonObject(payload.delta) ? payload.delta : {};
    if (typeof delta.text === 'string') {
      if (delta.text === '') return;
      const block = this.#textBlock(index, 'text', parts);
      if (block.kind === 'text') parts.push({ type: 'text-delta', id: block.id, delta: delta.text });
      return;
    }
    if (isJsonObject(delta.toolUse)) {
      const block = this.#blocks.get(index);
      const input = delta.toolUse.input;
      if (block?.kind === 'tool' && typeof input === 'string' && input !== '') parts.push({ type: 'tool-input-delta', id: block.id, delta: input });
      return;
    }
    if (isJsonObject(delta.reasoningContent)) {
      const reasoning = delta.reasoningContent;
      const block = this.#textBlock(index, 'reasoning', parts);
      if (block.kind !== 'reasoning') return;
      if (typeof reasoning.text === 'string' && reasoning.text !== '') parts.push({ type: 'reasoning-delta', id: block.id, delta: reasoning.text });
      if (typeof reasoning.signature === 'string') block.signature = (block.signature ?? '') + reasoning.signature;
      if (typeof reasoning.redactedContent === 'string') block.redactedData = (block.redactedData ?? '') + reasoning.redactedContent;
    }
  }

  #blockStop(index: number, parts: StreamPart[]): void {
    const block = this.#blocks.get(index);
    if (block === undefined) return;
    this.#blocks.delete(index);
    switch (block.kind) {
      case 'text':
        parts.push({ type: 'text-end', id: block.id });
        break;
      case 'reasoning':
        parts.push({
          type: 'reasoning-end',
          id: block.id,
          ...(block.signature === undefined ? {} : { signature: block.signature }),
          ...(block.redactedData === undefined ? {} : { redactedData: block.redactedData }),
        });
        break;
      case 'tool':
        parts.push({ type: 'tool-input-end', id: block.id });
        break;
      default: {
        const unknown: never = block.kind;
        throw new Error(`unknown block kind ${String(unknown)}`);
      }
    }
  }

  #closeAll(parts: StreamPart[]): void {
    for (const index of [...this.#blocks.keys()]) this.#blockStop(index, parts);
  }
}

/** A 2xx ConverseStream body (binary event stream) → canonical stream parts. */
export async function* parseConverseStream(body: AsyncIterable<Buffer>, model: string): AsyncIterable<StreamPart> {
  const decoder = new EventStreamDecoder();
  const parser = new ConverseStreamParser(model);
  for await (const chunk of body) {
    for (const message of decoder.push(chunk)) {
      yield* parser.message(message);
      if (parser.done) return;
    }
  }
  yield* parser.end();
}
