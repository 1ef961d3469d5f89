/**
 * The shared-state set-up of the `postgres+redis` scenarios: a throw-away database on the machine's PostgreSQL
 * (created through BENCH_DATABASE_URL, an admin connection) and the machine's Redis under a key prefix of its own,
 * both removed afterwards.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { createThrowawayPostgresDatabase, DEFAULT_POSTGRES_ADMIN_URL } from '../test/support/postgres-test-database.js';
import { RedisCommandProxy } from '../test/support/redis-command-proxy.js';
import type { WireCounts } from './measure.js';
import { startStatementCounter } from './postgres-statement-counter.js';

export const DEFAULT_BENCH_REDIS_URL = 'redis://127.0.0.1:6379';

/** What the Redis server has done since it started: CPU time and commands run (inside scripts too). */
export interface RedisLoad {
  cpuSeconds: number;
  commands: number;
}

export interface PostgresRedis {
  /** DATABASE_URL, REDIS_URL and REDIS_KEY_PREFIX for the gateway */
  env: Record<string, string>;
  /** PostgreSQL statements and Redis commands the gateway sent so far (its connections go through counting relays). */
  wireCounts(): WireCounts;
  /** How often each PostgreSQL statement text was run so far, and each Redis command name sent. */
  wireTexts(): { statements: Map<string, number>; redisCommands: Map<string, number> };
  /** The server's load so far; null when INFO cannot be read. The whole server's: keep other clients off it. */
  redisLoad(): Promise<RedisLoad | null>;
  /** drops the database and deletes the prefix's Redis keys */
  remove(): Promise<void>;
}

export async function startPostgresRedis(): Promise<PostgresRedis> {
  const database = await createThrowawayPostgresDatabase(process.env.BENCH_DATABASE_URL || DEFAULT_POSTGRES_ADMIN_URL);
  const redisUrl = process.env.BENCH_REDIS_URL || DEFAULT_BENCH_REDIS_URL;
  const prefix = `unigate-bench-${randomBytes(6).toString('hex')}:`;
  const counter = await startStatementCounter(database.url);
  const redisProxy = await RedisCommandProxy.start(redisUrl);
  return {
    env: { DATABASE_URL: counter.url, REDIS_URL: redisProxy.url, REDIS_KEY_PREFIX: prefix },
    wireCounts: () => ({ postgresStatements: counter.statements(), redisCommandsSent: redisProxy.commands.length }),
    wireTexts: () => {
      const redisCommands = new Map<string, number>();
      for (const command of redisProxy.commands) {
        const name = (command.args[0] ?? '').toUpperCase();
        redisCommands.set(name, (redisCommands.get(name) ?? 0) + 1);
      }
      return { statements: new Map(counter.texts()), redisCommands };
    },
    redisLoad: () => readRedisLoad(redisUrl),
    async remove() {
      await counter.close();
      await redisProxy.close();
      await database.drop();
      await deleteKeys(redisUrl, prefix);
    },
  };
}

/** Parses `INFO cpu` and `INFO commandstats`: user + system CPU, and the calls of every command summed. */
export function parseRedisLoad(info: string): RedisLoad | null {
  const user = /^used_cpu_user:(\S+)/m.exec(info)?.[1];
  const system = /^used_cpu_sys:(\S+)/m.exec(info)?.[1];
  if (user === undefined || system === undefined) return null;
  let commands = 0;
  for (const match of info.matchAll(/^cmdstat_[^:]+:calls=(\d+)/gm)) commands += Number(match[1]);
  return { cpuSeconds: Number(user) + Number(system), commands };
}

async function readRedisLoad(redisUrl: string): Promise<RedisLoad | null> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 2, enableReadyCheck: false });
  try {
    await redis.connect();
    return parseRedisLoad(await redis.call('INFO', 'cpu', 'commandstats') as string);
  } catch {
    return null;
  } finally {
    redis.disconnect();
  }
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

/** What ran between two readings of `wireTexts`, most frequent first, per request answered. */
export function describeWireTexts(before: Map<string, number>, after: Map<string, number>, requests: number, top = 15): string[] {
  const lines: [string, number][] = [];
  for (const [text, count] of after) {
    const ran = count - (before.get(text) ?? 0);
    if (ran > 0) lines.push([text, ran]);
  }
  lines.sort((left, right) => right[1] - left[1]);
  return lines.slice(0, top).map(([text, ran]) => `${ran.toString().padStart(8)}  ${(ran / Math.max(1, requests)).toFixed(4)}/req  ${text}`);
}
