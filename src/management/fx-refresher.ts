import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import { BackgroundJob } from '../shared/background-job.js';
import type { FxRates } from '../domain/records.js';
import type { Storage } from '../storage/storage.js';

const CURRENCIES = ['JPY', 'CNY', 'EUR'] as const;

/**
 * Reads USD exchange rates from a JSON source in the common shapes: `{ base, rates, date }` (ECB-style services)
 * or `{ base_code, rates, time_last_update_unix }` (exchange-rate APIs). Returns null when the shape is not one
 * of these or a rate is missing.
 */
export function parseFxSource(body: unknown, source: string, now: number): FxRates | null {
  if (body === null || typeof body !== 'object') return null;
  const document = body as Record<string, unknown>;
  const base = document.base ?? document.base_code ?? 'USD';
  if (base !== 'USD' || document.rates === null || typeof document.rates !== 'object') return null;
  const input = document.rates as Record<string, unknown>;
  const rates: Record<string, string> = {};
  for (const currency of CURRENCIES) {
    const value = input[currency];
    if (typeof value !== 'number' || !(value > 0)) return null;
    rates[currency] = String(value);
  }
  let asOf = now;
  if (typeof document.time_last_update_unix === 'number') asOf = document.time_last_update_unix * 1000;
  else if (typeof document.date === 'string' && !Number.isNaN(Date.parse(document.date))) asOf = Date.parse(document.date);
  return { base: 'USD', rates, asOf, source, updatedAt: now };
}

/**
 * Refreshes /api/fx/latest from FX_SOURCE_URL at once and then every interval (fixed: the rates change with time,
 * not with work here); failures keep the last good rates.
 */
export class FxRefresher {
  readonly #job = new BackgroundJob(() => this.refresh());
  /** Ends a refresh under way when the gateway stops, so stopping never waits for a slow source. */
  readonly #abort = new AbortController();

  constructor(
    private readonly url: string,
    private readonly intervalMs: number,
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.#abort.signal.aborted) return;
    this.#job.start({ name: 'FX refresh', baseMs: this.intervalMs, maxMs: this.intervalMs, found: (refreshed) => refreshed, logger: this.logger });
  }

  async refresh(): Promise<boolean> {
    try {
      const response = await fetch(this.url, { signal: AbortSignal.any([AbortSignal.timeout(10_000), this.#abort.signal]), headers: { accept: 'application/json' } });
      if (!response.ok) throw new Error(`status ${response.status}`);
      const rates = parseFxSource(await response.json(), new URL(this.url).host, this.clock.now());
      if (rates === null) {
        this.logger.warn('FX source answered in an unknown shape; keeping the last rates');
        return false;
      }
      await this.storage.fx.set(rates);
      return true;
    } catch (error) {
      if (this.#abort.signal.aborted) return false;
      this.logger.warn('FX refresh failed; keeping the last rates', describeError(error));
      return false;
    }
  }

  /** No refresh starts after this; settles once a running one has ended. */
  async stop(): Promise<void> {
    this.#abort.abort(new Error('gateway stopping'));
    await this.#job.stop();
  }
}
