import cluster from 'node:cluster';
import { LocalFailedAttemptGuard, type FailedAttemptGuard, type FailedAttemptOptions } from '../auth/failed-attempt-guard.js';
import { RedisFailedAttemptGuard } from '../auth/redis-failed-attempt-guard.js';
import type { GatewayConfig } from '../config/gateway-config.js';
import { ClusterInvalidationBus } from '../invalidation/cluster-invalidation-bus.js';
import { LocalInvalidationBus, type InvalidationBus } from '../invalidation/invalidation-bus.js';
import { RedisInvalidationBus } from '../invalidation/redis-invalidation-bus.js';
import { FleetMembership, type FleetView } from '../redis/fleet-membership.js';
import { createRedisConnection, warnOfReconnects, type Redis } from '../redis/redis-connection.js';
import type { Logger } from '../shared/logger.js';
import { InMemoryRateLimiter } from './in-memory-rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';

/** The state instances share: limit counters and cache invalidations. In process, or on Redis when REDIS_URL is set. */
export interface SharedLimits {
  limiter: RateLimiter;
  invalidation: InvalidationBus;
  /** Failed API keys and admin tokens per client IP address: the lockout windows. */
  authFailures: FailedAttemptGuard;
  /** `redis` or `memory`, for the startup log. */
  backend: 'redis' | 'memory';
  /** Whether Redis answers (null without Redis), for /readyz. */
  ping: (() => Promise<boolean>) | null;
  /** The limits' state for /readyz and the metrics: shared on Redis, degraded while it is unreachable, or in process. */
  state(): SharedLimitsState;
  close(): Promise<void>;
}

export interface SharedLimitsState {
  mode: 'redis' | 'degraded' | 'memory';
  /** Live instances as last seen in Redis (1 without Redis or before the first heartbeat). */
  fleet: FleetView;
}

export interface SharedLimitsOptions {
  /** Set by a serving instance: it announces itself in the fleet under this id, so the others can count it. */
  memberId?: string;
}

/** Suffix of the pub/sub channel after REDIS_KEY_PREFIX. */
export const INVALIDATION_CHANNEL = 'invalidations';
/** Suffix of the sorted set of live instances after REDIS_KEY_PREFIX. */
export const FLEET_MEMBERS_KEY = 'fleet:members';
/** How often a serving instance announces itself; it counts as gone after three missed announcements. */
const FLEET_HEARTBEAT_MS = 2000;
/** Addresses whose failure windows (or known lockouts) one process remembers at most. */
const AUTH_FAILURE_ENTRIES = 100_000;

function authFailureOptions(config: GatewayConfig): FailedAttemptOptions {
  return { limit: config.authFailures.limit, windowMs: config.authFailures.windowSeconds * 1000, maxEntries: AUTH_FAILURE_ENTRIES };
}

export async function openSharedLimits(config: GatewayConfig, logger: Logger, options: SharedLimitsOptions = {}): Promise<SharedLimits> {
  if (config.redisUrl === null) {
    const limiter = new InMemoryRateLimiter();
    // Workers of one process tell each other through the primary; a single process only itself.
    const invalidation = cluster.isWorker ? new ClusterInvalidationBus() : new LocalInvalidationBus();
    const authFailures = new LocalFailedAttemptGuard(authFailureOptions(config));
    return {
      limiter,
      invalidation,
      authFailures,
      backend: 'memory',
      ping: null,
      state: () => ({ mode: 'memory', fleet: { size: 1, rank: 0 } }),
      async close() {
        await limiter.close();
        await invalidation.close();
        await authFailures.close();
      },
    };
  }
  const commands = createRedisConnection(config.redisUrl, 'limits');
  const subscriber = createRedisConnection(config.redisUrl, 'invalidation');
  warnOfReconnects(logger, 'redis connection error: reconnecting', commands, subscriber);
  const membership = options.memberId === undefined
    ? null
    : new FleetMembership(commands, { key: `${config.redisKeyPrefix}${FLEET_MEMBERS_KEY}`, instanceId: options.memberId, heartbeatMs: FLEET_HEARTBEAT_MS, logger });
  const fleet = (): FleetView => membership?.view ?? { size: 1, rank: 0 };
  const limiter = new RedisRateLimiter(commands, {
    keyPrefix: config.redisKeyPrefix,
    leaseTtlMs: config.concurrencyLeaseSeconds * 1000,
    logger,
    degradedMode: config.redisDegradedMode,
    fleet,
  });
  const invalidation = await RedisInvalidationBus.start(commands, subscriber, `${config.redisKeyPrefix}${INVALIDATION_CHANNEL}`, logger);
  await membership?.start();
  const authFailures = new RedisFailedAttemptGuard(commands, { ...authFailureOptions(config), keyPrefix: config.redisKeyPrefix, logger });
  return {
    limiter,
    invalidation,
    authFailures,
    backend: 'redis',
    ping: async () => (await commands.ping()) === 'PONG',
    state: () => ({ mode: limiter.degraded ? 'degraded' : 'redis', fleet: fleet() }),
    async close() {
      await membership?.stop();
      await limiter.close();
      await invalidation.close();
      await authFailures.close();
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
