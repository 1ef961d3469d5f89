import type { InvalidationBus } from '../invalidation/invalidation-bus.js';
import { describeError, type Logger } from '../shared/logger.js';

/** While invalidations arrive live, the routing snapshot is re-read this often as a safety net. */
export const LIVE_ROUTING_REFRESH_MS = 60_000;

/**
 * Keeps the routing snapshot fresh against changes made by other instances: re-read every `refreshMs` without
 * live invalidations (their only way here), and every LIVE_ROUTING_REFRESH_MS while Redis delivers every change as
 * a message (a re-read for a message counts as one, so the timer never adds a second read right after it).
 */
export class RoutingRefresh {
  #timer: NodeJS.Timeout | null = null;
  #readAt = performance.now();

  constructor(
    private readonly reload: () => Promise<void>,
    private readonly bus: Pick<InvalidationBus, 'live'>,
    private readonly logger: Logger,
    private readonly refreshMs: number,
  ) {}

  /** Call on every reload of the snapshot, whatever caused it. */
  reloaded(): void {
    this.#readAt = performance.now();
  }

  start(): void {
    if (this.#timer !== null) return;
    const tick = Math.min(this.refreshMs, 1000);
    this.#timer = setInterval(() => {
      const every = this.bus.live ? Math.max(LIVE_ROUTING_REFRESH_MS, this.refreshMs) : this.refreshMs;
      if (performance.now() - this.#readAt < every - tick / 2) return;
      this.#readAt = performance.now();
      this.reload().catch((error: unknown) => this.logger.warn('routing snapshot refresh failed', describeError(error)));
    }, tick);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }
}
