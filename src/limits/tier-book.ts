import type { InvalidationBus } from '../invalidation/invalidation-bus.js';
import { describeError, type Logger } from '../shared/logger.js';
import { DEFAULT_TIER, type Tier } from '../domain/records.js';
import type { Storage } from '../storage/storage.js';

export interface TierLimits {
  rpm: number | null;
  tpm: number | null;
}

/** What admission asks: the per-account limits of a tier, answered from memory. */
export interface TierLimitsSource {
  limitsFor(tierName: string): TierLimits;
  /** Moves each time the tiers' limits are replaced: what was made from earlier answers is made again. */
  readonly generation: number;
}

export interface TierBookOptions {
  /** How often the whole table is re-read while invalidations are not live (the bound on a change's delay). */
  refreshMs: number;
  /** The same while invalidations are live (Redis pub/sub connected): only a safety net then. */
  liveRefreshMs: number;
}

const UNLIMITED: TierLimits = Object.freeze({ rpm: null, tpm: null });

/**
 * Every tier in memory (the table is small), so admission never reads storage. Re-read on each tier invalidation
 * (local or from another instance) and on a timer. An account naming a tier that does not exist (yet) gets the
 * `default` tier's limits; without a `default` row (never the case after migrations) limits are off.
 */
export class TierBook implements TierLimitsSource {
  #tiers = new Map<string, TierLimits>();
  #generation = 0;
  #started = 0;
  #applied = 0;
  #lastLoadAt = 0;
  #timer: NodeJS.Timeout | null = null;
  readonly #unsubscribe: () => void;

  constructor(
    private readonly storage: Storage,
    private readonly bus: InvalidationBus,
    private readonly logger: Logger,
    private readonly options: TierBookOptions,
  ) {
    this.#unsubscribe = bus.subscribe((message) => {
      if (message.kind === 'tier' || message.kind === 'all') this.#reloadInBackground();
    });
  }

  get generation(): number {
    return this.#generation;
  }

  limitsFor(tierName: string): TierLimits {
    return this.#tiers.get(tierName) ?? this.#tiers.get(DEFAULT_TIER) ?? UNLIMITED;
  }

  /** Re-reads every tier. Concurrent reloads are ordered: an older read never replaces a newer one. */
  async reload(): Promise<void> {
    this.#started += 1;
    const sequence = this.#started;
    const tiers = await this.storage.tiers.listAll();
    if (sequence < this.#applied) return;
    this.#applied = sequence;
    this.#lastLoadAt = performance.now();
    this.#tiers = new Map(tiers.map((tier: Tier) => [tier.name, { rpm: tier.rpm, tpm: tier.tpm }]));
    this.#generation += 1;
  }

  /** Loads once, then keeps the snapshot fresh until `stop`. */
  async start(): Promise<void> {
    await this.reload();
    const tick = Math.max(50, Math.min(this.options.refreshMs, 1000) / 2);
    this.#timer = setInterval(() => {
      const every = this.bus.live ? this.options.liveRefreshMs : this.options.refreshMs;
      if (performance.now() - this.#lastLoadAt >= every - tick / 2) this.#reloadInBackground();
    }, tick);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#unsubscribe();
  }

  #reloadInBackground(): void {
    this.reload().catch((error: unknown) => this.logger.warn('tier limits refresh failed', describeError(error)));
  }
}
