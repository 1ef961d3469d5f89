import type { LimitRule, RateLimiter } from '../limits/rate-limiter.js';
import type { Channel } from '../domain/records.js';

const MINUTE_MS = 60_000;

/** `settings.model_limits["<public model>"]` of a channel: the upstream's own per-model throttle. */
export interface ChannelModelLimit {
  rpm: number | null;
  tpm: number | null;
}

function positiveInteger(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : null;
}

/** The channel's limit for a model, or null when it has none (the common case: one property read). */
export function channelModelLimit(channel: Channel, model: string): ChannelModelLimit | null {
  const limits = channel.settings.model_limits;
  if (limits === null || typeof limits !== 'object') return null;
  const entry = (limits as Record<string, unknown>)[model];
  if (entry === null || typeof entry !== 'object') return null;
  const rpm = positiveInteger((entry as { rpm?: unknown }).rpm);
  const tpm = positiveInteger((entry as { tpm?: unknown }).tpm);
  return rpm === null && tpm === null ? null : { rpm, tpm };
}

/** Tokens charged against a channel-model TPM before the call, to correct with the real count afterwards. */
export interface ChannelTokenCharge {
  rule: LimitRule;
  estimate: number;
  chargedAt: number;
}

export type ChannelLimitDecision =
  | { allowed: true; tokenCharge: ChannelTokenCharge | null }
  | { allowed: false; retryAfterMs: number };

/** Takes one request (and the estimated tokens) from the channel-model's RPM/TPM, all or nothing. */
export async function consumeChannelModelLimit(
  limiter: RateLimiter,
  channel: Channel,
  model: string,
  limit: ChannelModelLimit,
  estimatedTokens: number,
  now: number,
): Promise<ChannelLimitDecision> {
  const requests: Array<{ rule: LimitRule; cost: number }> = [];
  let tokenRule: LimitRule | null = null;
  if (limit.rpm !== null) requests.push({ rule: { id: `channel-model:${channel.id}:${model}:rpm`, dimension: 'channel-model-rpm', limit: limit.rpm, windowMs: MINUTE_MS }, cost: 1 });
  if (limit.tpm !== null) {
    tokenRule = { id: `channel-model:${channel.id}:${model}:tpm`, dimension: 'channel-model-tpm', limit: limit.tpm, windowMs: MINUTE_MS };
    requests.push({ rule: tokenRule, cost: Math.max(1, estimatedTokens) });
  }
  const decision = await limiter.consume(requests, now);
  if (!decision.allowed) return { allowed: false, retryAfterMs: Math.max(0, decision.retryAfterMs) };
  return { allowed: true, tokenCharge: tokenRule === null ? null : { rule: tokenRule, estimate: Math.max(1, estimatedTokens), chargedAt: now } };
}
