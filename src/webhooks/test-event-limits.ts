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
export const TEST_EVENT_LIMITS = {
  perEndpoint: [{ limit: 5, windowMs: MINUTE_MS }],
  perOwner: [{ limit: 20, windowMs: MINUTE_MS }, { limit: 200, windowMs: HOUR_MS }],
} satisfies Record<string, Windows>;

function rules(scope: string, subject: string, windows: Windows): LimitRule[] {
  return windows.map(({ limit, windowMs }) => ({ id: `webhook-test:${scope}:${subject}:${windowMs}`, dimension: `webhook-test-${scope}`, limit, windowMs }));
}

/** Counts one test event to `endpointId` of `owner` (null: the operator); 429 with Retry-After when a window is full. */
export async function countTestEvent(limiter: RateLimiter, owner: string | null, endpointId: string, now: number): Promise<void> {
  const counted = [...rules('endpoint', endpointId, TEST_EVENT_LIMITS.perEndpoint), ...rules('owner', owner ?? 'operator', TEST_EVENT_LIMITS.perOwner)];
  const decision = await limiter.consume(counted.map((rule) => ({ rule, cost: 1 })), now);
  if (decision.allowed) return;
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  throw new GatewayError('rate_limit_exceeded', `Too many test events. Retry after ${seconds} s.`, { retryAfterSeconds: seconds, headers: rateLimitHeaders(decision.blocking) });
}
