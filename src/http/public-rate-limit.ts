import { GatewayError } from '../errors/gateway-error.js';
import { rateLimitHeaders } from '../relay/admission.js';
import type { GatewayServices } from '../services.js';
import type { RequestContext } from './request-context.js';

/** Spec 8: public endpoints are limited per caller IP (default 60 a minute) and never count against keys. */
export async function enforcePublicRateLimit(context: RequestContext, services: GatewayServices): Promise<void> {
  const rule = { id: `ip:${context.clientIp}:public`, dimension: 'ip-public', limit: services.config.publicRateLimitPerMinute, windowMs: 60_000 };
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
