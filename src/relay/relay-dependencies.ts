import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { DEFAULT_BALANCING_STRATEGY } from '../routing/balancing-strategy.js';
import type { RoutingDependencies } from '../routing/route-plan.js';
import type { GatewayServices } from '../services.js';
import type { Logger } from '../shared/logger.js';
import type { AdapterRegistry } from '../upstreams/adapter-registry.js';
import type { CredentialRotation } from './credential-rotation.js';
import type { LiveStreams } from './live-streams.js';

/** What the relays (chat and unary) need: adapters, keys, routing (health, limits, budget), metrics and the log. */
export interface RelayDependencies {
  adapters: AdapterRegistry;
  credentials: CredentialRotation;
  logger: Logger;
  routing: RoutingDependencies;
  metrics: GatewayMetrics;
  /** The chat streams in flight, ended when their key or account changes (absent: streams always run on). */
  liveStreams?: LiveStreams;
}

/** The relay's dependencies from the services; `maxAttempts` below the configured one for cheap operations. */
export function relayDependencies(services: GatewayServices, maxAttempts?: number): RelayDependencies {
  const { routing } = services.config;
  return {
    adapters: services.adapters,
    credentials: services.credentials,
    logger: services.logger,
    metrics: services.metrics,
    liveStreams: services.liveStreams,
    routing: {
      health: services.health,
      limiter: services.limiter,
      clock: services.clock,
      maxAttempts: Math.min(maxAttempts ?? routing.maxAttempts, routing.maxAttempts),
      retryBudgetMs: routing.retryBudgetMs,
      strategyOf: (model) => services.catalog.model(model)?.routingStrategy ?? DEFAULT_BALANCING_STRATEGY,
    },
  };
}
