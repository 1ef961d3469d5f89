import type { RateLimiter } from '../limits/rate-limiter.js';
import { countOutboundAction } from '../limits/outbound-action-limits.js';

/**
 * Test events make the gateway send requests to a URL its user typed: each is counted per endpoint and per owner (an
 * account, or the operator) on the deployment's shared limiter (`countOutboundAction`).
 * Counts one test event to `endpointId` of `owner` (null: the operator), `perMinute` a minute per endpoint allowed;
 * 429 with Retry-After when a window is full.
 */
export async function countTestEvent(limiter: RateLimiter, perMinute: number, owner: string | null, endpointId: string, now: number): Promise<void> {
  await countOutboundAction(limiter, { action: 'webhook-test', what: 'test events', scope: 'endpoint', perMinute }, owner, endpointId, now);
}
