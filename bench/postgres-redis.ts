/**
 * The shared-state set-up of the `postgres+redis` scenarios: a throw-away database on the machine's PostgreSQL
 * (created through BENCH_DATABASE_URL, an admin connection) and the machine's Redis under a key prefix of its own,
 * both removed afterwards.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createThrowawayPostgresDatabase, DEFAULT_POSTGRES_ADMIN_URL } from '../test/support/postgres-test-database.js';

export const DEFAULT_BENCH_REDIS_URL = 'redis://127.0.0.1:6379';

export interface PostgresRedis {
  /** DATABASE_URL, REDIS_URL and REDIS_KEY_PREFIX for the gateway */
  env: Record<string, string>;
  /** drops the database and deletes the prefix's Redis keys */
  remove(): Promise<void>;
}

export async function startPostgresRedis(): Promise<PostgresRedis> {
  const database = await createThrowawayPostgresDatabase(process.env.BENCH_DATABASE_URL || DEFAULT_POSTGRES_ADMIN_URL);
  const redisUrl = process.env.BENCH_REDIS_URL || DEFAULT_BENCH_REDIS_URL;
  const prefix = `unigate-bench-${randomBytes(6).toString('hex')}:`;
  return {
    env: { DATABASE_URL: database.url, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix },
    async remove() {
      await database.drop();
      await deleteKeys(redisUrl, prefix);
    },
  };
}

async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}
