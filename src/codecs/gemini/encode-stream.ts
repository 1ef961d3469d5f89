import type { StreamPart } from '../../ir/stream-part.js';
import type { Usage } from '../../ir/usage.js';
import type { StreamEncoder, StreamEncoderOptions } from '../client-codec.js';
import { argumentsObject } from './encode-parts.js';
import { encodeGeminiUsage } from '../../wire/gemini/usage.js';
import { JSON_ARRAY_END, JSON_ARRAY_SEPARATOR, sseEvent, streamErrorObject } from './encode-error.js';
import type { GeminiCandidate, GeminiGenerateContentResponse, GeminiPart } from '../../wire/gemini/gemini-wire.js';
import { toGeminiFinishReason } from '../../wire/gemini/finish-reason.js';

interface PendingCall {
  toolCallId: string;
  toolName: string;
  argumentsJson: string;
  signature?: string;
}

/**
 * Canonical stream parts → `streamGenerateContent` chunks, each a whole `GenerateContentResponse`:
 * - text and thought deltas become one chunk each (thoughts with `thought: true`); a signature at the end of a
 *   block becomes an empty text part carrying `thoughtSignature`, as Gemini itself ends its streams;
 * - function calls are buffered until `tool-input-end` and sent whole, with the signature their start carried
 *   (Gemini never streams arguments);
 * - every chunk carries the latest `usageMetadata` (running totals) once known, `modelVersion` and `responseId`;
 * - `finish` sends a last chunk with the finish reason and the final usage;
 * - `error` sends an error object with a numeric `code` (what `@google/genai` throws on) and ends the stream.
 * Framing: `sse: true` → `data: {…}\r\n\r\n` events (the `alt=sse` form every SDK asks for); `sse: false` → the
 * streamed JSON array `[{…}\n,\r\n{…}\n]` Google sends without `alt=sse`.
 */
export class GeminiStreamEncoder implements StreamEncoder {
  readonly #model: string;
  readonly #sse: boolean;
  readonly #calls = new Map<string, PendingCall>();
  #responseId = '';
  #usage: Usage | null = null;
  /** JSON framing: the opening `[` went out. */
  #arrayOpen = false;
  /** JSON framing: the closing `]` went out (after an error). */
  #arrayClosed = false;
  /** `finish` or `error` was encoded: nothing else may follow. */
  #closed = false;

  constructor(options: StreamEncoderOptions) {
    this.#model = options.model;
    this.#sse = options.sse;
  }

  encode(part: StreamPart): string {
    if (this.#closed) return '';
    switch (part.type) {
      case 'response-start':
        this.#responseId = part.id;
        return '';
      case 'text-start':
      case 'reasoning-start':
        return '';
      case 'text-delta':
        return part.delta === '' ? '' : this.#parts([{ text: part.delta }]);
      case 'text-end':
        return part.signature === undefined ? '' : this.#parts([{ text: '', thoughtSignature: part.signature }]);
      case 'reasoning-delta':
        return part.delta === '' ? '' : this.#parts([{ text: part.delta, thought: true }]);
      case 'reasoning-end':
        return part.signature === undefined ? '' : this.#parts([{ text: '', thought: true, thoughtSignature: part.signature }]);
      case 'tool-input-start':
        this.#calls.set(part.id, { toolCallId: part.toolCallId, toolName: part.toolName, argumentsJson: '', ...(part.signature === undefined ? {} : { signature: part.signature }) });
        return '';
      case 'tool-input-delta': {
        const call = this.#calls.get(part.id);
        if (call !== undefined) call.argumentsJson += part.delta;
        return '';
      }
      case 'tool-input-end':
        return this.#toolCall(part.id);
      case 'usage':
        this.#usage = part.usage;
        return '';
      case 'finish':
        if (part.usage !== null) this.#usage = part.usage;
        this.#closed = true;
        return this.#chunk({ finishReason: toGeminiFinishReason(part.reason), index: 0 });
      case 'web-search':
      case 'text-citation':
        // Searches and citations are not rebuilt as groundingMetadata on this wire.
        return '';
      case 'error': {
        this.#closed = true;
        const text = this.#frame(streamErrorObject(part));
        if (this.#sse) return text;
        this.#arrayClosed = true;
        return text + JSON_ARRAY_END;
      }
      default: {
        const unknown: never = part;
        throw new Error(`unknown stream part ${JSON.stringify(unknown)}`);
      }
    }
  }

  end(): string {
    if (this.#sse || this.#arrayClosed) return '';
    this.#arrayClosed = true;
    return this.#arrayOpen ? JSON_ARRAY_END : '[]';
  }

  #toolCall(id: string): string {
    const call = this.#calls.get(id);
    if (call === undefined) return '';
    this.#calls.delete(id);
    const part: GeminiPart = { functionCall: { id: call.toolCallId, name: call.toolName, args: argumentsObject(call.argumentsJson) } };
    if (call.signature !== undefined) part.thoughtSignature = call.signature;
    return this.#parts([part]);
  }

  #parts(parts: GeminiPart[]): string {
    return this.#chunk({ content: { parts, role: 'model' }, index: 0 });
  }

  #chunk(candidate: GeminiCandidate): string {
    const chunk: GeminiGenerateContentResponse = { candidates: [candidate], modelVersion: this.#model, responseId: this.#responseId };
    if (this.#usage !== null) chunk.usageMetadata = encodeGeminiUsage(this.#usage);
    return this.#frame(JSON.stringify(chunk));
  }

  #frame(json: string): string {
    if (this.#sse) return sseEvent(json);
    if (this.#arrayOpen) return `${JSON_ARRAY_SEPARATOR}${json}`;
    this.#arrayOpen = true;
    return `[${json}`;
  }
}
