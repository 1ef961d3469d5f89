import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';
import { consoleAuthRule, type ConsoleAuthAction } from '../limits/ip-rules.js';
import type { LimitRule } from '../limits/rate-limiter.js';
import { rateLimitHeaders } from '../limits/rate-limit-headers.js';
import type { ConsoleDeps } from './console-deps.js';
import { hashToken } from './secret-token.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** Credential actions limited per IP and per account (the email or user they target). */
export type LimitedAuthAction = ConsoleAuthAction | 'two-factor';

/**
 * Per account, escalating windows: a few tries at once, then fewer per hour, then per day. Each window that fills
 * makes the next wait longer (the backoff). Failed attempts count; a successful sign-in or code gives its try back.
 */
const ACCOUNT_WINDOWS: Readonly<Record<LimitedAuthAction, ReadonlyArray<{ limit: number; windowMs: number }>>> = {
  'sign-in': [{ limit: 5, windowMs: 5 * MINUTE_MS }, { limit: 15, windowMs: HOUR_MS }, { limit: 40, windowMs: DAY_MS }],
  'two-factor': [{ limit: 5, windowMs: 5 * MINUTE_MS }, { limit: 15, windowMs: HOUR_MS }, { limit: 40, windowMs: DAY_MS }],
  'password-reset': [{ limit: 3, windowMs: HOUR_MS }, { limit: 10, windowMs: DAY_MS }],
  'sign-up': [{ limit: 10, windowMs: HOUR_MS }],
};

function accountRules(action: LimitedAuthAction, subject: string): LimitRule[] {
  const id = hashToken(`${action}:${subject}`).slice(0, 32);
  return ACCOUNT_WINDOWS[action].map(({ limit, windowMs }) => ({
    id: `console:${action}:${id}:${windowMs}`, dimension: `account-console-${action}`, limit, windowMs,
  }));
}

/** A counted attempt; `succeeded` gives the per-account tries back (the per-IP one stays spent). */
export interface AuthAttempt {
  succeeded(): Promise<void>;
}

/**
 * Counts one attempt of `action` from this IP (and against `subject`, the email or user id, when known) before any
 * credential is checked; 429 with Retry-After when a window is full. Shared by every instance when REDIS_URL is set.
 */
export async function countAuthAttempt(deps: ConsoleDeps, context: RequestContext, action: LimitedAuthAction, subject: string | null): Promise<AuthAttempt> {
  const { limiter, clock } = deps.services;
  const now = clock.now();
  const ipRule = consoleAuthRule(action === 'two-factor' ? 'sign-in' : action, context.clientIp);
  const perAccount = subject === null ? [] : accountRules(action, subject);
  const decision = await limiter.consume([ipRule, ...perAccount].map((rule) => ({ rule, cost: 1 })), now);
  if (!decision.allowed) {
    const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    throw new GatewayError('rate_limit_exceeded', `Too many attempts. Retry after ${seconds} s.`, {
      retryAfterSeconds: seconds,
      headers: rateLimitHeaders(decision.blocking),
    });
  }
  return {
    async succeeded() {
      await Promise.all(perAccount.map((rule) => limiter.adjust(rule, -1, now)));
    },
  };
}
