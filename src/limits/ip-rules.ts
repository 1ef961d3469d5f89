import type { LimitRule } from './rate-limiter.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** The keyless public endpoints are limited per caller IP (PUBLIC_RATE_LIMIT_PER_MINUTE, default 60 a minute). */
export function publicEndpointRule(clientIp: string, perMinute: number): LimitRule {
  return { id: `ip:${clientIp}:public`, dimension: 'ip-public', limit: perMinute, windowMs: MINUTE_MS };
}

export type ConsoleAuthAction = 'sign-up' | 'sign-in' | 'password-reset';

/**
 * Anti-bruteforce on the console's credential endpoints, per caller IP. Sign-in allows a person who
 * mistypes a few times plus a shared office NAT; sign-up and password reset send mail or create records, so they
 * are scarcer. Each action has its own window, apart from the public endpoints' and from every key limit.
 */
export const CONSOLE_AUTH_LIMITS: Readonly<Record<ConsoleAuthAction, { limit: number; windowMs: number }>> = {
  'sign-in': { limit: 10, windowMs: MINUTE_MS },
  'sign-up': { limit: 5, windowMs: HOUR_MS },
  'password-reset': { limit: 5, windowMs: HOUR_MS },
};

/** The rule a console auth route consumes (cost 1 per attempt) before it checks any credential. */
export function consoleAuthRule(action: ConsoleAuthAction, clientIp: string): LimitRule {
  const { limit, windowMs } = CONSOLE_AUTH_LIMITS[action];
  return { id: `ip:${clientIp}:console-${action}`, dimension: `ip-console-${action}`, limit, windowMs };
}
