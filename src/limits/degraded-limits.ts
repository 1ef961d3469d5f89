import { DEPENDENCY_RETRY_AFTER_SECONDS, GatewayError } from '../errors/gateway-error.js';
import type { FleetView } from '../redis/fleet-membership.js';
import { describeError, type Logger } from '../shared/logger.js';
import { InMemoryRateLimiter } from './in-memory-rate-limiter.js';
import { shareOfLimit } from './limit-share.js';
import type { AdmissionDecision, ConcurrencySlot, LimitRule } from './rate-limiter.js';

/**
 * What happens while Redis cannot be reached (REDIS_DEGRADED_MODE): `share` enforces this instance's share of
 * every limit in process, `deny` refuses every limited request with 503 and Retry-After.
 */
export type RedisDegradedMode = 'share' | 'deny';

export interface DegradedLimitsOptions {
  logger: Logger;
  degradedMode?: RedisDegradedMode;
  /** The fleet as last seen in Redis, whose size divides every limit in `share` mode; one instance when absent. */
  fleet?: () => FleetView;
}

const SINGLE_INSTANCE: FleetView = { size: 1, rank: 0 };
/** At most one "Redis unavailable" warning per this interval. */
const WARN_INTERVAL_MS = 10_000;

type Charge = { rule: LimitRule; cost: number };

/**
 * The shared limits while Redis is unreachable, degraded on purpose: in `share` mode this instance enforces in
 * process its share of every limit (the limit divided by the live instances it last saw), so the fleet together
 * still admits at most the limit; in `deny` mode every limited request is refused with 503. It logs when the limits
 * degrade, at most one warning per interval meanwhile, and when Redis is back.
 */
export class DegradedLimits {
  readonly #fallback = new InMemoryRateLimiter();
  #degraded = false;
  #lastWarning = 0;

  constructor(private readonly options: DegradedLimitsOptions) {}

  get mode(): RedisDegradedMode {
    return this.options.degradedMode ?? 'share';
  }

  /** The admission in the degraded mode (`error`: why Redis failed; null: it was not asked, being down). */
  admit(slots: readonly ConcurrencySlot[], charged: readonly Charge[], now: number, error: unknown): AdmissionDecision {
    this.#enter(slots.length === 0 ? 'consume' : 'admit', error);
    if (this.mode === 'deny') throw limitsUnavailable();
    const fleet = this.options.fleet?.() ?? SINGLE_INSTANCE;
    const sharedSlots = slots.map((slot) => ({ id: slot.id, limit: shareOfLimit(slot.limit, slot.id, fleet) }));
    // A cost above this instance's whole share (a large token estimate) takes the whole share, as against the full limit.
    const sharedCharges = charged.map(({ rule, cost }) => {
      const share = this.#shareOf(rule);
      return { rule: share, cost: cost > 0 ? Math.min(cost, Math.max(1, share.limit)) : cost };
    });
    const decision = this.#fallback.admitNow({ slots: sharedSlots, charges: sharedCharges }, now);
    // A full slot is reported with the limit the caller asked for: its message names the whole limit.
    if (!decision.allowed && decision.slot !== null) return { allowed: false, slot: slots[sharedSlots.indexOf(decision.slot)] as ConcurrencySlot };
    return decision;
  }

  /** A correction made while Redis is away: counted against this instance's share (`share` mode only). */
  adjust(rule: LimitRule, delta: number, chargedAt: number): void {
    if (this.mode === 'share') this.#fallback.adjustNow(this.#shareOf(rule), delta, chargedAt);
  }

  /** Redis answered: the limits are shared by every instance again. */
  recovered(): void {
    if (!this.#degraded) return;
    this.#degraded = false;
    this.options.logger.info('redis reachable again: limits shared by every instance again', {});
  }

  /** A write Redis did not take (a correction, a release, a renewal): warned at most once per interval. */
  warn(operation: string, error: unknown): void {
    const now = Date.now();
    if (now - this.#lastWarning < WARN_INTERVAL_MS) return;
    this.#lastWarning = now;
    this.options.logger.warn('redis rate limiter unavailable: limits still degraded', { operation, ...describeError(error) });
  }

  close(): Promise<void> {
    return this.#fallback.close();
  }

  #shareOf(rule: LimitRule): LimitRule {
    const limit = shareOfLimit(rule.limit, rule.id, this.options.fleet?.() ?? SINGLE_INSTANCE);
    return limit === rule.limit ? rule : { ...rule, limit };
  }

  #enter(operation: string, error: unknown): void {
    if (!this.#degraded) {
      this.#degraded = true;
      const fleet = this.options.fleet?.() ?? SINGLE_INSTANCE;
      this.options.logger.warn(
        this.mode === 'deny'
          ? 'redis unreachable: limits degraded, refusing limited requests with 503 until it is back (REDIS_DEGRADED_MODE=deny)'
          : 'redis unreachable: limits degraded, this instance enforces its share of every limit until it is back',
        { operation, instances: fleet.size, ...(error === null ? {} : describeError(error)) },
      );
      this.#lastWarning = Date.now();
      return;
    }
    if (error !== null) this.warn(operation, error);
  }
}

/** The answer in `deny` mode while Redis is unreachable: nothing was admitted or charged. */
function limitsUnavailable(): GatewayError {
  return new GatewayError('service_unavailable', 'The gateway cannot reach its shared rate limits right now; nothing was charged. Retry shortly.', {
    retryAfterSeconds: DEPENDENCY_RETRY_AFTER_SECONDS,
  });
}
