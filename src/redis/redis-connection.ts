import { createRequire } from 'node:module';
import type { Redis as RedisClient, RedisOptions } from 'ioredis';
import { describeError, type Logger } from '../shared/logger.js';

export type { Redis } from 'ioredis';

/**
 * ioredis is loaded by the first connection made (only gateways with REDIS_URL make one), not at start-up: about
 * 2 MiB of heap a single-instance gateway never needs. It is a CommonJS package, so it loads synchronously.
 */
let RedisConstructor: (new (url: string, options: RedisOptions) => RedisClient) | null = null;

/**
 * The only constructor of Redis connections (REDIS_URL). Commands fail fast instead of queueing forever when
 * Redis is down, so a request sees an error rather than hanging; reconnection is automatic.
 */
export function createRedisConnection(url: string, name: string): RedisClient {
  RedisConstructor ??= (createRequire(import.meta.url)('ioredis') as { Redis: new (url: string, options: RedisOptions) => RedisClient }).Redis;
  return new RedisConstructor(url, {
    connectionName: `unigate-${name}`,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    lazyConnect: false,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
  });
}

/**
 * Logs the connection errors of `connections` (ioredis reconnects by itself) as `message`, at most once every ten
 * seconds for them all rather than on every attempt.
 */
export function warnOfReconnects(logger: Logger, message: string, ...connections: RedisClient[]): void {
  let lastReport = 0;
  const report = (error: unknown): void => {
    if (Date.now() - lastReport < 10_000) return;
    lastReport = Date.now();
    logger.warn(message, describeError(error));
  };
  for (const connection of connections) connection.on('error', report);
}
