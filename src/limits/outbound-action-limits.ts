import { GatewayError } from '../errors/gateway-error.js';
import type { LimitRule, RateLimiter } from './rate-limiter.js';
import { rateLimitHeaders } from './rate-limit-headers.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

type Windows = ReadonlyArray<{ limit: number; windowMs: number }>;

/**
 * Windows of an action that makes the gateway connect to an address its user typed (a webhook's test event, an MCP
 * server's check run now): `perMinute` a minute per target, four times that a minute and forty times an hour per
 * owner, so no target is flooded from the console or the admin API and an owner cannot spread a flood over many.
 */
export function outboundActionLimits(perMinute: number): { perTarget: Windows; perOwner: Windows } {
  return {
    perTarget: [{ limit: perMinute, windowMs: MINUTE_MS }],
    perOwner: [{ limit: 4 * perMinute, windowMs: MINUTE_MS }, { limit: 40 * perMinute, windowMs: HOUR_MS }],
  };
}

function rules(action: string, scope: string, subject: string, windows: Windows): LimitRule[] {
  return windows.map(({ limit, windowMs }) => ({ id: `${action}:${scope}:${subject}:${windowMs}`, dimension: `${action}-${scope}`, limit, windowMs }));
}

export interface OutboundAction {
  /** The limiter's name for the action (`webhook-test`, `mcp-check`); rule ids and dimensions start with it. */
  action: string;
  /** The refusal's words: "Too many <what>." */
  what: string;
  /** `scope` names the target's windows in rule ids (`endpoint`, `server`). */
  scope: string;
  perMinute: number;
}

/**
 * Counts one action to `targetId` of `owner` (null: the operator) on the deployment's shared limiter; 429
 * `rate_limit_exceeded` with Retry-After when a window is full.
 */
export async function countOutboundAction(limiter: RateLimiter, action: OutboundAction, owner: string | null, targetId: string, now: number): Promise<void> {
  const limits = outboundActionLimits(action.perMinute);
  const counted = [...rules(action.action, action.scope, targetId, limits.perTarget), ...rules(action.action, 'owner', owner ?? 'operator', limits.perOwner)];
  const decision = await limiter.consume(counted.map((rule) => ({ rule, cost: 1 })), now);
  if (decision.allowed) return;
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  throw new GatewayError('rate_limit_exceeded', `Too many ${action.what}. Retry after ${seconds} s.`, { retryAfterSeconds: seconds, headers: rateLimitHeaders(decision.blocking) });
}
