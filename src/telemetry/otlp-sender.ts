import { request } from 'undici';
import { describeError, type Logger } from '../shared/logger.js';

/** Tries per export: the first and two retries after a transient failure (429, 502-504, no connection). */
const MAX_TRIES = 3;
const BACKOFF_MS = [500, 1500];
/** A failing collector is reported at most this often per signal. */
const WARN_INTERVAL_MS = 60_000;

function transient(status: number): boolean {
  return status === 429 || status === 502 || status === 503 || status === 504;
}

/**
 * POSTs OTLP/JSON bodies to one endpoint. A failed export is dropped after its retries (telemetry must never hold
 * the gateway back) and reported in the log by status or error class only, never with the headers (they may carry a
 * collector key).
 */
export class OtlpSender {
  #lastWarning = Number.NEGATIVE_INFINITY;
  /** Exports given up on since the start. */
  failures = 0;

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
    private readonly timeoutMs: number,
    private readonly logger: Logger,
    private readonly signal: string,
  ) {}

  async send(body: string): Promise<boolean> {
    let outcome: Record<string, unknown> = {};
    for (let attempt = 0; attempt < MAX_TRIES; attempt += 1) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, BACKOFF_MS[attempt - 1]).unref());
      try {
        const response = await request(this.url, {
          method: 'POST',
          headers: { ...this.headers, 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(this.timeoutMs),
        });
        await response.body.dump();
        if (response.statusCode < 300) return true;
        outcome = { status: response.statusCode };
        if (!transient(response.statusCode)) break;
      } catch (error) {
        outcome = describeError(error);
      }
    }
    this.failures += 1;
    const now = performance.now();
    if (now - this.#lastWarning >= WARN_INTERVAL_MS) {
      this.#lastWarning = now;
      this.logger.warn('OTLP export failed; the batch was dropped', { signal: this.signal, failures: this.failures, ...outcome });
    }
    return false;
  }
}
