/**
 * Weight of the newest time to first byte in a channel-model's moving average: after five answers from a channel
 * that became slower, about 83% of the average is the new latency.
 */
const LATENCY_SMOOTHING = 0.3;

/** Bounds the map of latency figures against unbounded model names; a full map starts again. */
const MAX_LATENCY_ENTRIES = 10_000;

/**
 * What balancing reads about a channel besides its breakers, in this process: attempts in progress per channel,
 * the moving average (EWMA) of time to first byte per channel-model, and when the channel was last tried (so
 * background probes leave busy channels alone). Fed by the attempt tickets, read when a request is ordered.
 */
export class ChannelLoad {
  readonly #inFlight = new Map<string, number>();
  readonly #lastAttemptAt = new Map<string, number>();
  readonly #latency = new Map<string, number>();

  started(channelId: string, now: number): void {
    this.#inFlight.set(channelId, (this.#inFlight.get(channelId) ?? 0) + 1);
    this.#lastAttemptAt.set(channelId, now);
  }

  ended(channelId: string): void {
    const count = (this.#inFlight.get(channelId) ?? 0) - 1;
    if (count > 0) this.#inFlight.set(channelId, count);
    else this.#inFlight.delete(channelId);
  }

  recordFirstByte(channelId: string, model: string, latencyMs: number): void {
    const key = latencyKey(channelId, model);
    const previous = this.#latency.get(key);
    if (previous === undefined && this.#latency.size >= MAX_LATENCY_ENTRIES) this.#latency.clear();
    const sample = Math.max(0, latencyMs);
    this.#latency.set(key, previous === undefined ? sample : previous + LATENCY_SMOOTHING * (sample - previous));
  }

  inFlight(channelId: string): number {
    return this.#inFlight.get(channelId) ?? 0;
  }

  /** Moving average of time to first byte in ms; null before the first answer. */
  latencyMs(channelId: string, model: string): number | null {
    return this.#latency.get(latencyKey(channelId, model)) ?? null;
  }

  /** When an attempt last started on the channel (requests, tests and probes alike); null: never in this process. */
  lastAttemptAt(channelId: string): number | null {
    return this.#lastAttemptAt.get(channelId) ?? null;
  }

  /** Forgets a channel (deleted, or changed by an admin: its old figures say nothing about the new settings). */
  forget(channelId: string): void {
    this.#lastAttemptAt.delete(channelId);
    const prefix = latencyKey(channelId, '');
    for (const key of this.#latency.keys()) if (key.startsWith(prefix)) this.#latency.delete(key);
  }
}

function latencyKey(channelId: string, model: string): string {
  return `${channelId}\u0000${model}`;
}
