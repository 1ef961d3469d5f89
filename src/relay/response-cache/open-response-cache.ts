import type { GatewayConfig } from '../../config/gateway-config.js';
import { createRedisConnection } from '../../redis/redis-connection.js';
import { describeError, type Logger } from '../../shared/logger.js';
import { RedisResponseCacheStore } from './redis-response-cache-store.js';
import { ResponseCache } from './response-cache.js';
import { LruResponseCacheStore } from './response-cache-store.js';

/** The in-process cache's bounds: at most this many answers and this much stored text. */
export const IN_PROCESS_CACHE_BOUNDS = { maxEntries: 10_000, maxBytes: 64 * 1_048_576 };
/**
 * The response cache: on Redis when REDIS_URL is set (shared by every instance), else in this process. A Redis
 * lookup slower than RESPONSE_CACHE_LOOKUP_TIMEOUT_MS is answered as a miss: the cache never makes a request wait
 * on a slow Redis longer than that.
 */
export function openResponseCache(config: GatewayConfig, logger: Logger): ResponseCache {
  if (config.redisUrl === null) return new ResponseCache(new LruResponseCacheStore(IN_PROCESS_CACHE_BOUNDS), logger);
  const redis = createRedisConnection(config.redisUrl, 'response-cache');
  // Connection errors are reported by the store's failed commands; ioredis reconnects by itself.
  redis.on('error', (error: unknown) => logger.debug('response cache redis connection error', describeError(error)));
  return new ResponseCache(new RedisResponseCacheStore(redis, { keyPrefix: config.redisKeyPrefix, timeoutMs: config.responseCacheLookupTimeoutMs, logger }), logger);
}
