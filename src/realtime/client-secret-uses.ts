import type { RateLimiter } from '../limits/rate-limiter.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ClientSecretGrant } from './client-secret.js';

/**
 * The size of an epoch-aligned window that holds the whole of [from, until] (milliseconds), so a count kept in it is
 * never reset while the interval lasts. At most about twice the interval (so a shared counter expires soon after).
 */
export function windowCovering(from: number, until: number): number {
  const length = Math.max(1, until - from + 1);
  let size = 2 * length;
  while (Math.floor(from / size) !== Math.floor(until / size)) size += 1;
  return size;
}

/**
 * Takes one of a limited secret's sessions (true), or answers that none is left (false); a secret without a limit
 * always has one. The count is the rate limiter's, so instances sharing Redis share it.
 */
export async function takeSessionUse(limiter: RateLimiter, grant: ClientSecretGrant, now: number): Promise<boolean> {
  const limited = grant.sessions;
  if (limited === undefined) return true;
  const rule = { id: `realtime-secret:${grant.sessionId}:sessions`, dimension: 'secret-sessions', limit: limited.uses, windowMs: windowCovering(limited.createdAt, limited.newSessionsUntil) };
  const decision = await limiter.consume([{ rule, cost: 1 }], now);
  return decision.allowed;
}

/**
 * Refuses a new session a client secret may not open: one past its time for new sessions, or with every session it
 * may open used. Taking the session counts it.
 */
export async function admitSecretSession(limiter: RateLimiter, grant: ClientSecretGrant, now: number, noun: 'token' | 'client secret' = 'token'): Promise<void> {
  const limited = grant.sessions;
  if (limited === undefined) return;
  const deadline = noun === 'token' ? 'newSessionExpireTime' : 'time for new sessions';
  if (now > limited.newSessionsUntil) throw new GatewayError('expired_api_key', `This ${noun} can no longer open sessions: its ${deadline} has passed. Create another.`);
  if (!(await takeSessionUse(limiter, grant, now))) throw new GatewayError('expired_api_key', `This ${noun} has opened all the sessions it may (${limited.uses}). Create another.`);
}
