import { GatewayError } from '../errors/gateway-error.js';
import type { LimitRule } from '../limits/rate-limiter.js';
import { rateLimitHeaders } from '../limits/rate-limit-headers.js';
import type { GatewayServices } from '../services.js';
import { hashToken } from './secret-token.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

type Windows = ReadonlyArray<{ limit: number; windowMs: number }>;

/**
 * Mail that console users make the gateway send: invitations go to any address the inviter types, and each support
 * request mails the operator's support address and the user. Each is counted per user, and invitations also per
 * address invited (whoever invites it) and support requests per client address, so no one mails a stranger, or the
 * operator, over and over.
 */
export const MAIL_LIMITS = {
  // Enough for a team brought in at once; an address is asked a few times a day at most.
  invitationsPerUser: [{ limit: 50, windowMs: HOUR_MS }, { limit: 200, windowMs: DAY_MS }],
  invitationsPerAddress: [{ limit: 5, windowMs: DAY_MS }],
  ticketsPerUser: [{ limit: 5, windowMs: HOUR_MS }, { limit: 20, windowMs: DAY_MS }],
  ticketsPerClient: [{ limit: 10, windowMs: HOUR_MS }, { limit: 40, windowMs: DAY_MS }],
} satisfies Record<string, Windows>;

function rules(scope: string, subject: string, windows: Windows): LimitRule[] {
  const id = hashToken(`${scope}:${subject}`).slice(0, 32);
  return windows.map(({ limit, windowMs }) => ({ id: `console-mail:${scope}:${id}:${windowMs}`, dimension: `console-${scope}`, limit, windowMs }));
}

async function count(services: Pick<GatewayServices, 'limiter' | 'clock'>, counted: LimitRule[], what: string): Promise<void> {
  const decision = await services.limiter.consume(counted.map((rule) => ({ rule, cost: 1 })), services.clock.now());
  if (decision.allowed) return;
  const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  throw new GatewayError('rate_limit_exceeded', `Too many ${what}. Retry after ${seconds} s.`, { retryAfterSeconds: seconds, headers: rateLimitHeaders(decision.blocking) });
}

/** Counts one invitation mail from `userId` to `address`; 429 with Retry-After when a window is full. */
export function countInvitation(services: Pick<GatewayServices, 'limiter' | 'clock'>, userId: string, address: string): Promise<void> {
  return count(services, [...rules('invitations-user', userId, MAIL_LIMITS.invitationsPerUser), ...rules('invitations-address', address, MAIL_LIMITS.invitationsPerAddress)], 'invitations');
}

/** Counts one support request from `userId` at `clientIp`; 429 with Retry-After when a window is full. */
export function countSupportRequest(services: Pick<GatewayServices, 'limiter' | 'clock'>, userId: string, clientIp: string): Promise<void> {
  return count(services, [...rules('tickets-user', userId, MAIL_LIMITS.ticketsPerUser), ...rules('tickets-client', clientIp, MAIL_LIMITS.ticketsPerClient)], 'support requests');
}
