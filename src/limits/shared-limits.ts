import cluster from 'node:cluster';
import type { GatewayConfig } from '../config/gateway-config.js';
import { ClusterInvalidationBus } from '../invalidation/cluster-invalidation-bus.js';
import { LocalInvalidationBus, type InvalidationBus } from '../invalidation/invalidation-bus.js';
import { RedisInvalidationBus } from '../invalidation/redis-invalidation-bus.js';
import { createRedisConnection, type Redis } from '../redis/redis-connection.js';
import { describeError, type Logger } from '../shared/logger.js';
import { InMemoryRateLimiter } from './in-memory-rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';

/** The state instances share: limit counters and cache invalidations. In process, or on Redis when REDIS_URL is set. */
export interface SharedLimits {
  limiter: RateLimiter;
  invalidation: InvalidationBus;
  /** `redis` or `memory`, for the startup log. */
  backend: 'redis' | 'memory';
  /** Whether Redis answers (null without Redis), for /readyz. */
  ping: (() => Promise<boolean>) | null;
  close(): Promise<void>;
}

/** Suffix of the pub/sub channel after REDIS_KEY_PREFIX. */
export const INVALIDATION_CHANNEL = 'invalidations';

export async function openSharedLimits(config: GatewayConfig, logger: Logger): Promise<SharedLimits> {
  if (config.redisUrl === null) {
    const limiter = new InMemoryRateLimiter();
    // Workers of one process tell each other through the primary; a single process only itself.
    const invalidation = cluster.isWorker ? new ClusterInvalidationBus() : new LocalInvalidationBus();
    return {
      limiter,
      invalidation,
      backend: 'memory',
      ping: null,
      async close() {
        await limiter.close();
        await invalidation.close();
      },
    };
  }
  const commands = createRedisConnection(config.redisUrl, 'limits');
  const subscriber = createRedisConnection(config.redisUrl, 'invalidation');
  // ioredis reconnects by itself; say so in the log at most every ten seconds rather than on every attempt.
  let lastReport = 0;
  const report = (error: unknown): void => {
    if (Date.now() - lastReport < 10_000) return;
    lastReport = Date.now();
    logger.warn('redis connection error: reconnecting', describeError(error));
  };
  commands.on('error', report);
  subscriber.on('error', report);
  const limiter = new RedisRateLimiter(commands, { keyPrefix: config.redisKeyPrefix, leaseTtlMs: config.concurrencyLeaseSeconds * 1000, logger });
  const invalidation = await RedisInvalidationBus.start(commands, subscriber, `${config.redisKeyPrefix}${INVALIDATION_CHANNEL}`, logger);
  return {
    limiter,
    invalidation,
    backend: 'redis',
    ping: async () => (await commands.ping()) === 'PONG',
    async close() {
      await limiter.close();
      await invalidation.close();
      await Promise.all([quit(commands), quit(subscriber)]);
    },
  };
}

async function quit(connection: Redis): Promise<void> {
  try {
    await connection.quit();
  } catch {
    connection.disconnect();
  }
}
