import type { LimitRule } from '../limits/rate-limiter.js';

const WINDOW_MS = 15 * 60_000;

/**
 * Anti-guessing on the account-facing redeem endpoint: failed attempts are counted per API key and per caller IP
 * in 15-minute windows; past the limit every attempt answers 429 until the window ends. A successful redemption
 * gives its attempt back, so only failures count. (Guessing a 125-bit code is hopeless anyway; this keeps the
 * endpoint from being used as an oracle or a load generator.)
 */
export const REDEEM_FAILURE_LIMITS = {
  perKey: { limit: 10, windowMs: WINDOW_MS },
  perIp: { limit: 30, windowMs: WINDOW_MS },
} as const;

export function redeemFailureRules(keyId: string, clientIp: string): LimitRule[] {
  return [
    { id: `key:${keyId}:redeem-failures`, dimension: 'key-redeem-failures', ...REDEEM_FAILURE_LIMITS.perKey },
    { id: `ip:${clientIp}:redeem-failures`, dimension: 'ip-redeem-failures', ...REDEEM_FAILURE_LIMITS.perIp },
  ];
}
