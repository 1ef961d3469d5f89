import { randomBytes } from 'node:crypto';
import { DEPENDENCY_RETRY_AFTER_SECONDS, GatewayError } from '../errors/gateway-error.js';
import type { FleetView } from '../redis/fleet-membership.js';
import type { Redis } from '../redis/redis-connection.js';
import { describeError, type Logger } from '../shared/logger.js';
import { decide, windowStart } from './fixed-window.js';
import { InMemoryRateLimiter } from './in-memory-rate-limiter.js';
import { shareOfLimit } from './limit-share.js';
import type { ConcurrencyLease, LimitDecision, LimitRule, RateLimiter } from './rate-limiter.js';
import { ACQUIRE, ADJUST, CONSUME, RENEW } from './redis-lua.js';
import { RedisScript } from './redis-script.js';

export interface RedisRateLimiterOptions {
  /** Prefix of every key (REDIS_KEY_PREFIX), so several gateways or test runs can share one Redis. */
  keyPrefix: string;
  /** How long a concurrency lease lives without renewal; held leases are renewed every third of it. */
  leaseTtlMs: number;
  logger: Logger;
  /**
   * What happens while Redis cannot be reached (REDIS_DEGRADED_MODE): `share` enforces this instance's share of
   * every limit in process, `deny` refuses every limited request with 503 and Retry-After.
   */
  degradedMode?: RedisDegradedMode;
  /** The fleet as last seen in Redis, whose size divides every limit in `share` mode; one instance when absent. */
  fleet?: () => FleetView;
}

export type RedisDegradedMode = 'share' | 'deny';

const SINGLE_INSTANCE: FleetView = { size: 1, rank: 0 };

/** A window counter outlives its window by this much, so late corrections and clock skew between instances still land. */
const COUNTER_GRACE_MS = 5000;
/** Leases renewed per script call. */
const RENEW_BATCH = 500;
/** At most one "Redis unavailable" warning per this interval. */
const WARN_INTERVAL_MS = 10_000;

const consumeScript = new RedisScript(CONSUME);
const adjustScript = new RedisScript(ADJUST);
const acquireScript = new RedisScript(ACQUIRE);
const renewScript = new RedisScript(RENEW);

interface HeldLease {
  key: string;
  id: string;
}

/**
 * Limits shared by every instance on one Redis: each decision is one Lua script, so two instances admit exactly
 * the limit between them. Windows are the same epoch-aligned fixed windows as in process, keyed by window start.
 *
 * While Redis is unreachable the limiter is degraded, on purpose and in one of two ways: in `share` mode each
 * instance enforces, in process, its share of every limit (the limit divided by the live instances it last saw in
 * Redis), so the fleet together still admits at most the limit; in `deny` mode every limited request is refused
 * with 503 and Retry-After. It logs when it degrades and when Redis is back.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #fallback = new InMemoryRateLimiter();
  readonly #held = new Set<HeldLease>();
  readonly #instance = randomBytes(6).toString('hex');
  #sequence = 0;
  #lastWarning = 0;
  #degraded = false;
  readonly #renewal: NodeJS.Timeout;
  #closed = false;

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisRateLimiterOptions,
  ) {
    this.#renewal = setInterval(() => void this.#renew(), Math.max(100, Math.floor(options.leaseTtlMs / 3)));
    this.#renewal.unref();
    redis.on('ready', this.#onReady);
  }

  readonly #onReady = (): void => this.#recovered();

  async consume(requests: ReadonlyArray<{ rule: LimitRule; cost: number }>, now: number): Promise<LimitDecision> {
    // Counters are integers: a fractional cost is charged as the next whole unit, here and in the script alike.
    const charged = requests.map(({ rule, cost }) => ({ rule, cost: Math.ceil(cost) }));
    if (!this.#available()) return this.#degradedConsume(charged, now, null);
    const keys: string[] = [];
    const args: Array<string | number> = [];
    for (const { rule, cost } of charged) {
      const start = windowStart(rule, now);
      keys.push(this.#counterKey(rule, start));
      args.push(rule.limit, cost, start + rule.windowMs - now + COUNTER_GRACE_MS);
    }
    let reply: unknown;
    try {
      reply = await consumeScript.run(this.redis, keys, args);
    } catch (error) {
      return this.#degradedConsume(charged, now, error);
    }
    this.#recovered();
    // The script decided atomically; the same rule applied to the counts it saw (before this request) gives the
    // same answer and the remaining/reset figures of every dimension.
    const used = (reply as Array<number | string>).slice(1).map(Number);
    return decide(charged, used, now);
  }

  async adjust(rule: LimitRule, delta: number, chargedAt: number): Promise<void> {
    const rounded = Math.trunc(delta);
    if (rounded === 0) return;
    if (!this.#available()) {
      if (this.#mode === 'share') this.#fallback.adjustNow(this.#shareOf(rule), rounded, chargedAt);
      return;
    }
    try {
      await adjustScript.run(this.redis, [this.#counterKey(rule, windowStart(rule, chargedAt))], [rounded]);
    } catch (error) {
      this.#warn('adjust', error);
    }
  }

  async acquire(id: string, limit: number): Promise<ConcurrencyLease | null> {
    if (!this.#available()) return this.#degradedAcquire(id, limit, null);
    this.#sequence += 1;
    const held: HeldLease = { key: `${this.options.keyPrefix}cc:${id}`, id: `${this.#instance}:${this.#sequence.toString(36)}` };
    let reply: unknown;
    try {
      reply = await acquireScript.run(this.redis, [held.key], [limit, held.id, this.options.leaseTtlMs]);
    } catch (error) {
      return this.#degradedAcquire(id, limit, error);
    }
    this.#recovered();
    if (Number(reply) !== 1) return null;
    this.#held.add(held);
    return {
      release: () => {
        if (!this.#held.delete(held)) return;
        this.redis.zrem(held.key, held.id).catch((error: unknown) => this.#warn('release', error));
      },
    };
  }

  /** True while Redis cannot be reached and the limits are enforced in the degraded mode. */
  get degraded(): boolean {
    return !this.#available();
  }

  /** Leases this instance holds now. */
  get heldLeases(): number {
    return this.#held.size;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#renewal);
    this.redis.off('ready', this.#onReady);
    const leases = [...this.#held];
    this.#held.clear();
    if (leases.length > 0 && this.#available()) {
      const pipeline = this.redis.pipeline();
      for (const lease of leases) pipeline.zrem(lease.key, lease.id);
      await pipeline.exec().catch(() => undefined);
    }
    await this.#fallback.close();
  }

  get #mode(): RedisDegradedMode {
    return this.options.degradedMode ?? 'share';
  }

  #shareOf(rule: LimitRule): LimitRule {
    const limit = shareOfLimit(rule.limit, rule.id, this.options.fleet?.() ?? SINGLE_INSTANCE);
    return limit === rule.limit ? rule : { ...rule, limit };
  }

  #degradedConsume(charged: ReadonlyArray<{ rule: LimitRule; cost: number }>, now: number, error: unknown): LimitDecision {
    this.#enterDegraded('consume', error);
    if (this.#mode === 'deny') throw limitsUnavailable();
    // A cost above this instance's whole share (a large token estimate) takes the whole share, as against the full limit.
    const shared = charged.map(({ rule, cost }) => {
      const share = this.#shareOf(rule);
      return { rule: share, cost: cost > 0 ? Math.min(cost, Math.max(1, share.limit)) : cost };
    });
    return this.#fallback.consumeNow(shared, now);
  }

  #degradedAcquire(id: string, limit: number, error: unknown): ConcurrencyLease | null {
    this.#enterDegraded('acquire', error);
    if (this.#mode === 'deny') throw limitsUnavailable();
    return this.#fallback.acquireNow(id, shareOfLimit(limit, id, this.options.fleet?.() ?? SINGLE_INSTANCE));
  }

  #enterDegraded(operation: string, error: unknown): void {
    if (!this.#degraded) {
      this.#degraded = true;
      const fleet = this.options.fleet?.() ?? SINGLE_INSTANCE;
      this.options.logger.warn(
        this.#mode === 'deny'
          ? 'redis unreachable: limits degraded, refusing limited requests with 503 until it is back (REDIS_DEGRADED_MODE=deny)'
          : 'redis unreachable: limits degraded, this instance enforces its share of every limit until it is back',
        { operation, instances: fleet.size, ...(error === null ? {} : describeError(error)) },
      );
      this.#lastWarning = Date.now();
      return;
    }
    if (error !== null) this.#warn(operation, error);
  }

  #recovered(): void {
    if (!this.#degraded) return;
    this.#degraded = false;
    this.options.logger.info('redis reachable again: limits shared by every instance again', {});
  }

  #counterKey(rule: LimitRule, start: number): string {
    return `${this.options.keyPrefix}rl:${rule.id}:${start}`;
  }

  #available(): boolean {
    return this.redis.status === 'ready';
  }

  /** Pushes out the expiry of every lease still held, so a live stream keeps its slot and a dead process loses its own. */
  async #renew(): Promise<void> {
    if (this.#held.size === 0 || !this.#available()) return;
    const leases = [...this.#held];
    for (let offset = 0; offset < leases.length; offset += RENEW_BATCH) {
      const batch = leases.slice(offset, offset + RENEW_BATCH).filter((lease) => this.#held.has(lease));
      if (batch.length === 0) continue;
      try {
        await renewScript.run(this.redis, batch.map((lease) => lease.key), [this.options.leaseTtlMs, ...batch.map((lease) => lease.id)]);
      } catch (error) {
        this.#warn('renew', error);
        return;
      }
      // A lease released while the renewal was on its way was put back: take it out again.
      for (const lease of batch) if (!this.#held.has(lease)) this.redis.zrem(lease.key, lease.id).catch(() => undefined);
    }
  }

  #warn(operation: string, error: unknown): void {
    const now = Date.now();
    if (now - this.#lastWarning < WARN_INTERVAL_MS) return;
    this.#lastWarning = now;
    this.options.logger.warn('redis rate limiter unavailable: limits still degraded', { operation, ...describeError(error) });
  }
}

/** The answer in `deny` mode while Redis is unreachable: nothing was admitted or charged. */
function limitsUnavailable(): GatewayError {
  return new GatewayError('service_unavailable', 'The gateway cannot reach its shared rate limits right now; nothing was charged. Retry shortly.', {
    retryAfterSeconds: DEPENDENCY_RETRY_AFTER_SECONDS,
  });
}
