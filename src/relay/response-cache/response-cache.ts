import type { ChatRequest } from '../../ir/chat-request.js';
import type { ChatResponse } from '../../ir/chat-response.js';
import type { StreamPart } from '../../ir/stream-part.js';
import { describeError, type Logger } from '../../shared/logger.js';
import type { UpstreamAdapter } from '../../upstreams/upstream-adapter.js';
import { AnswerCollector, isReplayable } from './answer-parts.js';
import { parseAnswer, serializeAnswer, type CachedAnswer } from './cached-answer.js';
import type { CachePlan } from './cache-plan.js';
import type { ResponseCacheStore } from './response-cache-store.js';

/** The largest answer kept (its stored JSON); a longer one is answered normally and not cached. */
export const MAX_ENTRY_BYTES = 1_048_576;

/**
 * What one attempt's answer looked like, reported by the relay as it forwards it; `complete` once the whole answer
 * reached the caller successfully, which stores it. Nothing is stored for an attempt that never completes.
 */
export interface AnswerRecorder {
  /** Translated, not streamed: the parsed answer. */
  answer(response: ChatResponse): void;
  /** Translated, streamed: each canonical part. */
  part(part: StreamPart): void;
  /** Same protocol, not streamed: the upstream's body as relayed. */
  rawBody(body: Buffer): void;
  /** Same protocol, streamed: each chunk of the upstream's stream. */
  rawChunk(chunk: Buffer): void;
  complete(): void;
}

/** Hands the relay one recorder per upstream attempt. */
export interface AnswerCapture {
  attempt(adapter: UpstreamAdapter, chat: () => ChatRequest): AnswerRecorder;
}

/** The cached answers of chat requests: looked up after admission, stored once an answer completed. */
export class ResponseCache {
  constructor(private readonly store: ResponseCacheStore, private readonly logger: Logger) {}

  /** The stored answer for the plan's key, or null (a miss, an unreadable entry, or a backend failure). */
  async lookup(plan: CachePlan): Promise<CachedAnswer | null> {
    if (plan.key === null || !plan.lookup) return null;
    const stored = await this.store.get(plan.key);
    return stored === null ? null : parseAnswer(stored);
  }

  /** A capture storing the answer under the plan's key; null when the plan stores nothing. */
  capture(plan: CachePlan): AnswerCapture | null {
    const { key, ttlMs } = plan;
    if (key === null || !plan.store) return null;
    return { attempt: (adapter, chat) => new Recorder(adapter, chat, (answer) => this.#save(key, answer, ttlMs), this.logger) };
  }

  close(): Promise<void> {
    return this.store.close();
  }

  #save(key: string, answer: CachedAnswer, ttlMs: number): void {
    if (!isReplayable(answer.content)) return;
    const text = serializeAnswer(answer);
    if (text.length > MAX_ENTRY_BYTES) return;
    this.store.set(key, text, ttlMs).catch((error: unknown) => this.logger.warn('response cache store failed', describeError(error)));
  }
}

class Recorder implements AnswerRecorder {
  #parsed: ChatResponse | null = null;
  #collector: AnswerCollector | null = null;
  #raw: Buffer[] | null = null;
  #rawStreamed = true;
  #rawBytes = 0;
  #tooLarge = false;

  constructor(
    private readonly adapter: UpstreamAdapter,
    private readonly chat: () => ChatRequest,
    private readonly save: (answer: CachedAnswer) => void,
    private readonly logger: Logger,
  ) {}

  answer(response: ChatResponse): void {
    this.#parsed = response;
  }

  part(part: StreamPart): void {
    (this.#collector ??= new AnswerCollector()).add(part);
  }

  rawBody(body: Buffer): void {
    this.#rawStreamed = false;
    this.rawChunk(body);
  }

  rawChunk(chunk: Buffer): void {
    if (this.#tooLarge) return;
    this.#rawBytes += chunk.length;
    // Stream framing roughly doubles an answer's size; past that bound the answer would not be kept anyway.
    if (this.#rawBytes > 4 * MAX_ENTRY_BYTES) {
      this.#tooLarge = true;
      this.#raw = null;
      return;
    }
    (this.#raw ??= []).push(chunk);
  }

  complete(): void {
    if (this.#tooLarge) return;
    if (this.#parsed !== null) return this.#keep(fromResponse(this.#parsed));
    if (this.#collector !== null) return this.#keep(this.#collector.answer());
    const raw = this.#raw;
    if (raw === null) return;
    this.#raw = null;
    // The same-protocol answer is read back into canonical form after the caller has it, off the answer's path.
    setImmediate(() => {
      this.#fromRaw(raw).then((answer) => this.#keep(answer), (error: unknown) => this.logger.debug('cached answer not readable', describeError(error)));
    });
  }

  async #fromRaw(raw: Buffer[]): Promise<CachedAnswer | null> {
    const chat = this.chat();
    if (!this.#rawStreamed) return fromResponse(this.adapter.parseChatResponse(Buffer.concat(raw), chat));
    const collector = new AnswerCollector();
    async function* chunks(): AsyncIterable<Buffer> {
      yield* raw;
    }
    for await (const part of this.adapter.parseChatStream(chunks(), chat)) collector.add(part);
    return collector.answer();
  }

  #keep(answer: CachedAnswer | null): void {
    if (answer === null || answer.finishReason.unified === 'error') return;
    this.save(answer);
  }
}

function fromResponse(response: ChatResponse): CachedAnswer {
  return { content: response.content, finishReason: response.finishReason, usage: response.usage };
}
