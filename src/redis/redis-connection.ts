import { Redis } from 'ioredis';

export type { Redis } from 'ioredis';

/**
 * The only constructor of Redis connections (REDIS_URL). Commands fail fast instead of queueing forever when
 * Redis is down, so a request sees an error rather than hanging; reconnection is automatic.
 */
export function createRedisConnection(url: string, name: string): Redis {
  return new Redis(url, {
    connectionName: `unigate-${name}`,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    lazyConnect: false,
    retryStrategy: (attempt) => Math.min(attempt * 100, 2000),
  });
}
