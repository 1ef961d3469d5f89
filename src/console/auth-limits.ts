import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';
import { consoleAuthRule, type ConsoleAuthAction } from '../limits/ip-rules.js';
import type { LimitDecision, LimitRule } from '../limits/rate-limiter.js';
import { rateLimitHeaders } from '../limits/rate-limit-headers.js';
import type { ConsoleUser } from '../storage/repositories/console-repository.js';
import type { ConsoleDeps } from './console-deps.js';
import { hashToken } from './secret-token.js';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;

/** Credential actions limited per IP and per account (the email or user they target). */
export type LimitedAuthAction = ConsoleAuthAction | 'two-factor';

type Windows = ReadonlyArray<{ limit: number; windowMs: number }>;

/** Escalating windows: a few tries at once, then fewer per hour, then per day (each full window waits longer). */
const ESCALATING: Windows = [{ limit: 5, windowMs: 5 * MINUTE_MS }, { limit: 15, windowMs: HOUR_MS }, { limit: 40, windowMs: DAY_MS }];

/**
 * Per subject, whatever the address: failed second-factor codes (only a holder of the password gets that far),
 * reset requests (each mails the address), sign-ups of one email, and admin-token guesses at the operator bootstrap.
 * Passwords of console users are counted by `countPasswordCheck` instead.
 */
const ACCOUNT_WINDOWS: Readonly<Record<LimitedAuthAction, Windows>> = {
  'sign-in': ESCALATING,
  'two-factor': ESCALATING,
  'password-reset': [{ limit: 3, windowMs: HOUR_MS }, { limit: 10, windowMs: DAY_MS }],
  'sign-up': [{ limit: 10, windowMs: HOUR_MS }],
};

/** Failed sign-ins of one email from one address: that address is refused for that email once a window is full. */
export const SIGN_IN_FROM_ADDRESS_WINDOWS: Windows = ESCALATING;

/**
 * Failed sign-ins of one email from every address together (a spread-out guessing attack). Once a window is full
 * the email is locked: the right password alone is refused everywhere, and lets through only a user who then gives
 * their second factor. Far above what one address may try, so no single address can lock anyone out.
 */
export const SIGN_IN_LOCK_WINDOWS: Windows = [{ limit: 50, windowMs: HOUR_MS }, { limit: 200, windowMs: DAY_MS }];

function rulesFor(scope: string, subject: string, windows: Windows): LimitRule[] {
  const id = hashToken(`${scope}:${subject}`).slice(0, 32);
  return windows.map(({ limit, windowMs }) => ({ id: `console:${scope}:${id}:${windowMs}`, dimension: `account-console-${scope}`, limit, windowMs }));
}

/**
 * The counts guarding a user's password start again when the password changes (a completed reset clears a lock):
 * the subject names the password hash it guards. An unknown email has no password: its counts are by email alone.
 */
function guardedSubject(name: string, user: ConsoleUser | null): string {
  return user === null ? name : `${name}:${hashToken(user.passwordHash).slice(0, 16)}`;
}

function tooMany(decision: Extract<LimitDecision, { allowed: false }>, message: (seconds: number) => string): GatewayError {
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  return new GatewayError('rate_limit_exceeded', message(seconds), { retryAfterSeconds: seconds, headers: rateLimitHeaders(decision.blocking) });
}

const retryAfter = (seconds: number): string => `Too many attempts. Retry after ${seconds} s.`;

/** A counted attempt; `succeeded` gives the per-account tries back (the per-IP one stays spent). */
export interface AuthAttempt {
  succeeded(): Promise<void>;
}

/**
 * Counts one attempt of `action` from this IP (and against `subject`, the email or user id, when known) before any
 * credential is checked; 429 with Retry-After when a window is full. Shared by every instance when REDIS_URL is set.
 * A second-factor attempt names the user, whose current password is part of what is counted.
 */
export async function countAuthAttempt(deps: ConsoleDeps, context: RequestContext, action: LimitedAuthAction, subject: string | null, user: ConsoleUser | null = null): Promise<AuthAttempt> {
  const { limiter, clock } = deps.services;
  const now = clock.now();
  const ipRule = consoleAuthRule(action === 'two-factor' ? 'sign-in' : action, context.clientIp);
  const perAccount = subject === null ? [] : rulesFor(action, guardedSubject(subject, user), ACCOUNT_WINDOWS[action]);
  const decision = await limiter.consume([ipRule, ...perAccount].map((rule) => ({ rule, cost: 1 })), now);
  if (!decision.allowed) throw tooMany(decision, retryAfter);
  return {
    async succeeded() {
      await Promise.all(perAccount.map((rule) => limiter.adjust(rule, -1, now)));
    },
  };
}

/** A counted password check: `locked` says the email is locked (the right password then needs a second factor). */
export interface PasswordAttempt extends AuthAttempt {
  readonly locked: boolean;
  /** The refusal of a locked email (for a wrong password, or a right one without a second factor). */
  lockedError(): GatewayError;
}

/**
 * Counts one password check for `email` (its user, when there is one) from this request's address, before the
 * password is checked: 429 when this address may try no more (10 a minute, or its own failures for this email are
 * at a window's limit). Failures from every address together lock the email (`locked`) rather than refuse the
 * check, so the route can still let the right password and a second factor through. A success gives the email's
 * tries back; a completed password reset starts every count again.
 */
export async function countPasswordCheck(deps: ConsoleDeps, context: RequestContext, email: string, user: ConsoleUser | null, options: { ipRule: boolean } = { ipRule: true }): Promise<PasswordAttempt> {
  const { limiter, clock } = deps.services;
  const now = clock.now();
  const subject = guardedSubject(email, user);
  const fromAddress = rulesFor('sign-in', `${subject}:${context.clientIp}`, SIGN_IN_FROM_ADDRESS_WINDOWS);
  const counted = options.ipRule ? [consoleAuthRule('sign-in', context.clientIp), ...fromAddress] : fromAddress;
  const decision = await limiter.consume(counted.map((rule) => ({ rule, cost: 1 })), now);
  if (!decision.allowed) throw tooMany(decision, retryAfter);
  const everywhere = rulesFor('sign-in-lock', subject, SIGN_IN_LOCK_WINDOWS);
  const lock = await limiter.consume(everywhere.map((rule) => ({ rule, cost: 1 })), now);
  const charged = lock.allowed ? [...fromAddress, ...everywhere] : fromAddress;
  return {
    locked: !lock.allowed,
    lockedError() {
      if (lock.allowed) throw new Error('the email is not locked');
      return tooMany(lock, (seconds) => `Too many failed sign-ins for this account. Sign in with your second factor, reset your password, or retry after ${seconds} s.`);
    },
    async succeeded() {
      await Promise.all(charged.map((rule) => limiter.adjust(rule, -1, now)));
    },
  };
}
