import { createHash } from 'node:crypto';
import type { Redis } from '../redis/redis-connection.js';

/**
 * A Lua script run by its SHA-1 (EVALSHA), loaded with EVAL the first time a server does not know it (a new or
 * restarted Redis). Scripts run atomically: no other command interleaves with one.
 */
export class RedisScript {
  readonly #sha: string;

  constructor(readonly source: string) {
    this.#sha = createHash('sha1').update(source).digest('hex');
  }

  async run(redis: Redis, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown> {
    try {
      return await redis.evalsha(this.#sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}
