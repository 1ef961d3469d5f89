import { GatewayError } from '../errors/gateway-error.js';
import { publicEndpointRule } from '../limits/ip-rules.js';
import type { LimitRule } from '../limits/rate-limiter.js';
import { rateLimitHeaders } from '../limits/rate-limit-headers.js';
import type { GatewayServices } from '../services.js';
import type { RequestContext } from './request-context.js';

/** Public endpoints are limited per caller IP (default 60 a minute) and never count against keys. */
export async function enforcePublicRateLimit(context: RequestContext, services: GatewayServices): Promise<void> {
  await enforceIpRateLimit(context, services, publicEndpointRule(context.clientIp, services.config.publicRateLimitPerMinute));
}

/**
 * Takes one request from a per-IP rule (the public endpoints', or a console auth action's: `consoleAuthRule`);
 * sets the X-RateLimit headers, or throws 429 with Retry-After until the window frees.
 */
export async function enforceIpRateLimit(context: RequestContext, services: GatewayServices, rule: LimitRule): Promise<void> {
  const decision = await services.limiter.consume([{ rule, cost: 1 }], services.clock.now());
  if (decision.allowed) {
    const state = decision.states[0];
    if (state !== undefined) for (const [name, value] of Object.entries(rateLimitHeaders(state))) context.response.setHeader(name, value);
    return;
  }
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  throw new GatewayError('rate_limit_exceeded', `Too many requests from this IP address. Retry after ${seconds} s.`, {
    retryAfterSeconds: seconds,
    headers: rateLimitHeaders(decision.blocking),
  });
}
