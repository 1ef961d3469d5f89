import { RedisScript } from '../limits/redis-script.js';
import type { Redis } from '../redis/redis-connection.js';
import { describeError, type Logger } from '../shared/logger.js';
import { LocalFailedAttemptGuard, type CredentialSurface, type FailedAttemptGuard, type FailedAttemptOptions, type FailureOutcome } from './failed-attempt-guard.js';

/**
 * KEYS[1]: the address's failure counter; ARGV[1]: the window in ms. Counts one failure; the window starts with the
 * address's first failure and its counter expires with it. Returns `{failures, ms left of the window}`.
 */
const RECORD = `
local failures = redis.call('INCR', KEYS[1])
if failures == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {failures, left}
`;

/** KEYS[1]: the address's failure counter; ARGV[1]: the limit. Ms left of its lockout, or -1 when it is not locked out. */
const CHECK = `
local failures = tonumber(redis.call('GET', KEYS[1]) or '0')
if failures < tonumber(ARGV[1]) then return -1 end
local left = redis.call('PTTL', KEYS[1])
if left < 0 then return -1 end
return left
`;

const recordScript = new RedisScript(RECORD);
const checkScript = new RedisScript(CHECK);

/** At most one "Redis unavailable" warning per this interval. */
const WARN_INTERVAL_MS = 10_000;

export interface RedisFailedAttemptOptions extends FailedAttemptOptions {
  /** REDIS_KEY_PREFIX. */
  keyPrefix: string;
  logger: Logger;
}

/**
 * The failure windows shared by every instance on one Redis: one counter per surface and address, so a lockout
 * started through one instance holds on all of them. Lockouts learnt from Redis are remembered here until they end,
 * so a locked-out address costs no Redis call for what this instance already knows. While Redis is unreachable,
 * failures are counted in this process (each instance then locks out on its own count) and a warning is logged.
 */
export class RedisFailedAttemptGuard implements FailedAttemptGuard {
  /** Lockouts known here: `surface address` → when it ends (this process's clock). */
  readonly #lockedUntil = new Map<string, number>();
  readonly #fallback: LocalFailedAttemptGuard;
  #lastWarning = 0;

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisFailedAttemptOptions,
  ) {
    this.#fallback = new LocalFailedAttemptGuard(options);
  }

  refusedFor(surface: CredentialSurface, address: string, now: number): number | null {
    const known = this.#known(`${surface} ${address}`, now);
    return known ?? this.#fallback.refusedFor(surface, address, now);
  }

  async check(surface: CredentialSurface, address: string, now: number): Promise<number | null> {
    const known = this.refusedFor(surface, address, now);
    if (known !== null || !this.#available()) return known;
    try {
      const left = Number(await checkScript.run(this.redis, [this.#key(surface, address)], [this.options.limit]));
      return left > 0 ? this.#remember(`${surface} ${address}`, now, left) : null;
    } catch (error) {
      this.#warn(error);
      return null;
    }
  }

  async recordFailure(surface: CredentialSurface, address: string, now: number): Promise<FailureOutcome> {
    if (!this.#available()) return this.#fallback.countFailure(surface, address, now);
    let reply: [number, number];
    try {
      reply = await recordScript.run(this.redis, [this.#key(surface, address)], [this.options.windowMs]) as [number, number];
    } catch (error) {
      this.#warn(error);
      return this.#fallback.countFailure(surface, address, now);
    }
    const [failures, left] = reply.map(Number) as [number, number];
    if (failures < this.options.limit) return { started: false, lockedForSeconds: null };
    const seconds = this.#remember(`${surface} ${address}`, now, left);
    return failures === this.options.limit ? { started: true, lockedForSeconds: null } : { started: false, lockedForSeconds: seconds };
  }

  close(): Promise<void> {
    this.#lockedUntil.clear();
    return this.#fallback.close();
  }

  #key(surface: CredentialSurface, address: string): string {
    return `${this.options.keyPrefix}auth-failures:${surface}:${address}`;
  }

  #known(id: string, now: number): number | null {
    if (this.#lockedUntil.size === 0) return null;
    const until = this.#lockedUntil.get(id);
    if (until === undefined) return null;
    if (until <= now) {
      this.#lockedUntil.delete(id);
      return null;
    }
    return Math.ceil((until - now) / 1000);
  }

  /** Remembers a lockout `leftMs` from now; returns its seconds left. */
  #remember(id: string, now: number, leftMs: number): number {
    this.#lockedUntil.delete(id);
    if (this.#lockedUntil.size >= this.options.maxEntries) {
      const oldest = this.#lockedUntil.keys().next();
      if (oldest.done !== true) this.#lockedUntil.delete(oldest.value);
    }
    this.#lockedUntil.set(id, now + leftMs);
    return Math.max(1, Math.ceil(leftMs / 1000));
  }

  #available(): boolean {
    return this.redis.status === 'ready';
  }

  #warn(error: unknown): void {
    const now = Date.now();
    if (now - this.#lastWarning < WARN_INTERVAL_MS) return;
    this.#lastWarning = now;
    this.options.logger.warn('redis unavailable for failed-credential windows: counting in this process', describeError(error));
  }
}
