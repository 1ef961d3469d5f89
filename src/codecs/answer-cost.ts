import type { StreamPart } from '../ir/stream-part.js';
import type { Usage } from '../ir/usage.js';
import { spliceUsageCost, withUsageCost, type AnswerCost } from '../wire/usage-cost.js';
import type { ClientCodec, OpeningEvent, PassThroughStreamObserver, StreamEncoder } from './client-codec.js';

/**
 * Where an answer carries its cost: the codec's own objects write it, since only they know which part of the answer
 * completes its usage. A whole answer gets the cost its relay quoted (the one its header and its settlement use);
 * a stream gets the cost of its final usage, spliced once, into the event that completes it.
 */

/** A whole answer (encoded, or forwarded as a same-wire upstream wrote it) with `costUsd` in its usage object. */
export function answerWithCost(codec: ClientCodec, body: Buffer | string, costUsd: string): Buffer | string {
  return withUsageCost(body, costUsd, codec.usageKey);
}

/**
 * `encoder` pricing its stream: the finish part's encoding ends with the final usage (OpenAI's usage chunk,
 * Anthropic's message_delta, Gemini's closing chunk), so the first finish gets the cost of the usage reported up to
 * it. The encoder itself when there is no cost to carry or no usage object to carry it in (`usageKey` null).
 */
export function withStreamCost(encoder: StreamEncoder, cost: AnswerCost | undefined, usageKey: string | null): StreamEncoder {
  return cost === undefined || usageKey === null ? encoder : new CostedStreamEncoder(encoder, cost, usageKey);
}

class CostedStreamEncoder implements StreamEncoder {
  #usage: Usage | null = null;
  #priced = false;
  readonly #encoder: StreamEncoder;
  readonly #cost: AnswerCost;
  readonly #usageKey: string;

  constructor(encoder: StreamEncoder, cost: AnswerCost, usageKey: string) {
    this.#encoder = encoder;
    this.#cost = cost;
    this.#usageKey = usageKey;
  }

  encode(part: StreamPart): string {
    if (part.type === 'usage') this.#usage = part.usage;
    else if (part.type === 'finish' && part.usage !== null) this.#usage = part.usage;
    const encoded = this.#encoder.encode(part);
    if (part.type !== 'finish' || this.#priced) return encoded;
    this.#priced = true;
    if (this.#usage === null) return encoded;
    return spliceUsageCost(encoded, this.#cost.costUsd(this.#usage), this.#usageKey)?.toString('utf8') ?? encoded;
  }

  end(): string {
    return this.#encoder.end();
  }
}

/**
 * What every codec's pass-through observer shares: the cost of the stream's final usage, spliced into the first
 * forwarded event after which the usage is final (OpenAI's usage chunk, Anthropic's message_delta, Gemini's closing
 * chunk). Kept on the observer itself, so a stream allocates nothing more for it.
 */
export abstract class CostingObserver implements PassThroughStreamObserver {
  #cost: AnswerCost | null = null;
  /** Null: nothing (more) to price. */
  #usageKey: string | null = null;

  /** This observer, pricing the stream's final usage at `cost` in its `usageKey` object (none when either is absent). */
  costing(cost: AnswerCost | undefined, usageKey: string | null): this {
    this.#cost = cost ?? null;
    this.#usageKey = cost === undefined ? null : usageKey;
    return this;
  }

  priced(event: Buffer): Buffer {
    if (this.#usageKey === null || !this.usageIsFinal()) return event;
    const usageKey = this.#usageKey;
    this.#usageKey = null;
    const usage = this.reportedUsage();
    if (usage === null || this.#cost === null) return event;
    return spliceUsageCost(event, this.#cost.costUsd(usage), usageKey) ?? event;
  }

  abstract observe(event: Buffer): boolean;
  abstract opening(event: Buffer): OpeningEvent;
  abstract reportedUsage(): Usage | null;
  abstract usageIsFinal(): boolean;
  abstract takeDeliveredText(): Iterable<string>;
  abstract completed(): boolean;
  abstract answerFacts(): ReturnType<PassThroughStreamObserver['answerFacts']>;
}
