import { GatewayError } from '../errors/gateway-error.js';
import type { LimitRule, RateLimiter } from '../limits/rate-limiter.js';
import { rateLimitHeaders } from '../limits/rate-limit-headers.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

type Windows = ReadonlyArray<{ limit: number; windowMs: number }>;

/**
 * Test events make the gateway send requests to a URL its user typed: each is counted per endpoint and per owner (an
 * account, or the operator), on the deployment's shared limiter, so no endpoint is flooded from the console or the
 * admin API, and an account cannot spread a flood over many endpoints.
 */
export function testEventLimits(perMinute: number): { perEndpoint: Windows; perOwner: Windows } {
  return {
    perEndpoint: [{ limit: perMinute, windowMs: MINUTE_MS }],
    perOwner: [{ limit: 4 * perMinute, windowMs: MINUTE_MS }, { limit: 40 * perMinute, windowMs: HOUR_MS }],
  };
}

function rules(scope: string, subject: string, windows: Windows): LimitRule[] {
  return windows.map(({ limit, windowMs }) => ({ id: `webhook-test:${scope}:${subject}:${windowMs}`, dimension: `webhook-test-${scope}`, limit, windowMs }));
}

/**
 * Counts one test event to `endpointId` of `owner` (null: the operator), `perMinute` a minute per endpoint allowed;
 * 429 with Retry-After when a window is full.
 */
export async function countTestEvent(limiter: RateLimiter, perMinute: number, owner: string | null, endpointId: string, now: number): Promise<void> {
  const limits = testEventLimits(perMinute);
  const counted = [...rules('endpoint', endpointId, limits.perEndpoint), ...rules('owner', owner ?? 'operator', limits.perOwner)];
  const decision = await limiter.consume(counted.map((rule) => ({ rule, cost: 1 })), now);
  if (decision.allowed) return;
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  throw new GatewayError('rate_limit_exceeded', `Too many test events. Retry after ${seconds} s.`, { retryAfterSeconds: seconds, headers: rateLimitHeaders(decision.blocking) });
}
