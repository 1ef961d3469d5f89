import type { Redis } from '../../redis/redis-connection.js';
import { describeError, type Logger } from '../../shared/logger.js';
import type { ResponseCacheStore } from './response-cache-store.js';

/** Suffix of the cache's keys after REDIS_KEY_PREFIX. */
export const RESPONSE_CACHE_KEY_SPACE = 'response-cache:';

export interface RedisStoreOptions {
  keyPrefix: string;
  /** A lookup slower than this is a miss: the request goes upstream rather than wait on Redis. */
  timeoutMs: number;
  logger: Logger;
}

/**
 * Cached answers on Redis (`SET … PX ttl`), shared by every instance. Redis being slow or down never fails a
 * request: a lookup that errs or takes longer than `timeoutMs` is a miss, a store that errs is skipped.
 */
export class RedisResponseCacheStore implements ResponseCacheStore {
  #lastReport = 0;

  constructor(private readonly redis: Redis, private readonly options: RedisStoreOptions) {}

  async get(key: string): Promise<string | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.options.timeoutMs);
    });
    try {
      return await Promise.race([this.redis.get(this.#key(key)), timeout]);
    } catch (error) {
      this.#report('response cache lookup failed: treated as a miss', error);
      return null;
    } finally {
      clearTimeout(timer);
    }
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    try {
      await this.redis.set(this.#key(key), value, 'PX', Math.max(1, Math.round(ttlMs)));
    } catch (error) {
      this.#report('response cache store failed: answer not cached', error);
    }
  }

  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }

  #key(key: string): string {
    return `${this.options.keyPrefix}${RESPONSE_CACHE_KEY_SPACE}${key}`;
  }

  /** At most one line every ten seconds, so a Redis outage does not flood the log. */
  #report(message: string, error: unknown): void {
    if (Date.now() - this.#lastReport < 10_000) return;
    this.#lastReport = Date.now();
    this.options.logger.warn(message, describeError(error));
  }
}
