import { randomBytes } from 'node:crypto';
import type { Redis } from '../redis/redis-connection.js';
import { describeError, type Logger } from '../shared/logger.js';
import { decide, windowStart } from './fixed-window.js';
import { InMemoryRateLimiter } from './in-memory-rate-limiter.js';
import type { ConcurrencyLease, LimitDecision, LimitRule, RateLimiter } from './rate-limiter.js';
import { ACQUIRE, ADJUST, CONSUME, RENEW } from './redis-lua.js';
import { RedisScript } from './redis-script.js';

export interface RedisRateLimiterOptions {
  /** Prefix of every key (REDIS_KEY_PREFIX), so several gateways or test runs can share one Redis. */
  keyPrefix: string;
  /** How long a concurrency lease lives without renewal; held leases are renewed every third of it. */
  leaseTtlMs: number;
  logger: Logger;
}

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
 * While Redis is unreachable the limiter degrades to in-process limits (each instance enforces them on its own)
 * rather than refusing all traffic or letting it through unlimited, and logs that it does.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #fallback = new InMemoryRateLimiter();
  readonly #held = new Set<HeldLease>();
  readonly #instance = randomBytes(6).toString('hex');
  #sequence = 0;
  #lastWarning = 0;
  readonly #renewal: NodeJS.Timeout;
  #closed = false;

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisRateLimiterOptions,
  ) {
    this.#renewal = setInterval(() => void this.#renew(), Math.max(100, Math.floor(options.leaseTtlMs / 3)));
    this.#renewal.unref();
  }

  async consume(requests: ReadonlyArray<{ rule: LimitRule; cost: number }>, now: number): Promise<LimitDecision> {
    // Counters are integers: a fractional cost is charged as the next whole unit, here and in the script alike.
    const charged = requests.map(({ rule, cost }) => ({ rule, cost: Math.ceil(cost) }));
    if (!this.#available()) return this.#fallback.consumeNow(charged, now);
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
      this.#warn('consume', error);
      return this.#fallback.consumeNow(charged, now);
    }
    // The script decided atomically; the same rule applied to the counts it saw (before this request) gives the
    // same answer and the remaining/reset figures of every dimension.
    const used = (reply as Array<number | string>).slice(1).map(Number);
    return decide(charged, used, now);
  }

  async adjust(rule: LimitRule, delta: number, chargedAt: number): Promise<void> {
    const rounded = Math.trunc(delta);
    if (rounded === 0) return;
    if (!this.#available()) {
      this.#fallback.adjustNow(rule, rounded, chargedAt);
      return;
    }
    try {
      await adjustScript.run(this.redis, [this.#counterKey(rule, windowStart(rule, chargedAt))], [rounded]);
    } catch (error) {
      this.#warn('adjust', error);
    }
  }

  async acquire(id: string, limit: number): Promise<ConcurrencyLease | null> {
    if (!this.#available()) return this.#fallback.acquireNow(id, limit);
    this.#sequence += 1;
    const held: HeldLease = { key: `${this.options.keyPrefix}cc:${id}`, id: `${this.#instance}:${this.#sequence.toString(36)}` };
    let reply: unknown;
    try {
      reply = await acquireScript.run(this.redis, [held.key], [limit, held.id, this.options.leaseTtlMs]);
    } catch (error) {
      this.#warn('acquire', error);
      return this.#fallback.acquireNow(id, limit);
    }
    if (Number(reply) !== 1) return null;
    this.#held.add(held);
    return {
      release: () => {
        if (!this.#held.delete(held)) return;
        this.redis.zrem(held.key, held.id).catch((error: unknown) => this.#warn('release', error));
      },
    };
  }

  /** Leases this instance holds now. */
  get heldLeases(): number {
    return this.#held.size;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#renewal);
    const leases = [...this.#held];
    this.#held.clear();
    if (leases.length > 0 && this.#available()) {
      const pipeline = this.redis.pipeline();
      for (const lease of leases) pipeline.zrem(lease.key, lease.id);
      await pipeline.exec().catch(() => undefined);
    }
    await this.#fallback.close();
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
    this.options.logger.warn('redis rate limiter unavailable: using in-process limits meanwhile', { operation, ...describeError(error) });
  }
}
