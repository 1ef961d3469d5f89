import type { GatewayConfig } from '../config/gateway-config.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { ChannelHealth } from './channel-health.js';
import type { BreakerPolicy } from './circuit-breaker.js';
import { RedisHealthSync } from './redis-health-sync.js';

export function breakerPolicyOf(config: GatewayConfig): BreakerPolicy {
  const { routing } = config;
  return {
    failureThreshold: routing.breakerFailureThreshold,
    failureRatePercent: routing.breakerFailureRatePercent,
    minimumRequests: routing.breakerMinimumRequests,
    windowMs: routing.breakerWindowMs,
    cooldownMs: routing.breakerCooldownMs,
    maxCooldownMs: routing.breakerMaxCooldownMs,
  };
}

/** Channel health in process, shared through Redis when REDIS_URL is set. */
export async function openChannelHealth(config: GatewayConfig, clock: Clock, logger: Logger): Promise<{ health: ChannelHealth; shared: boolean; close(): Promise<void> }> {
  const health = new ChannelHealth(breakerPolicyOf(config), clock, logger);
  if (config.redisUrl === null) return { health, shared: false, close: async () => undefined };
  const sync = await RedisHealthSync.start(config.redisUrl, config.redisKeyPrefix, health, logger);
  return { health, shared: true, close: () => sync.close() };
}
