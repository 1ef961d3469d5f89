import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';
import { newId } from '../shared/ids.js';
import type { AccountRole, ConsoleSession, ConsoleUser } from '../storage/repositories/console-repository.js';
import { consoleUsesTls, type ConsoleDeps } from './console-deps.js';
import { readCookies, serializeCookie } from './cookies.js';
import { hashToken, newSecretToken } from './secret-token.js';
import { projectScopeOf, type ProjectScope } from './project-scope.js';

const DAY_MS = 86_400_000;
/** A session ends this long after sign-in, however active… */
export const SESSION_LIFETIME_MS = 30 * DAY_MS;
/** …or after this long without a request. */
export const SESSION_IDLE_MS = 7 * DAY_MS;
/** `last_seen_at` is written at most this often per session. */
const TOUCH_INTERVAL_MS = 60_000;

export function sessionCookieName(deps: ConsoleDeps): string {
  return consoleUsesTls(deps) ? '__Host-unigate_session' : 'unigate_session';
}

export function preSessionCookieName(deps: ConsoleDeps): string {
  return consoleUsesTls(deps) ? '__Host-unigate_csrf' : 'unigate_csrf';
}

/** A signed-in request: the session, its user and the user's role on the session's account. */
export interface ActiveSession {
  session: ConsoleSession;
  user: ConsoleUser;
  role: AccountRole;
  /** The projects the user is limited to on this account (null: the whole account, as the role allows). */
  projects: ProjectScope | null;
}

/**
 * The session the request's cookie names, if it is live, its user is still a member of its account and that account
 * is enabled (a disabled or deleted account ends its sessions, whichever process changed it).
 */
export async function resolveSession(deps: ConsoleDeps, context: RequestContext): Promise<ActiveSession | null> {
  const token = readCookies(context.request).get(sessionCookieName(deps));
  if (token === undefined || token.length > 100) return null;
  const repository = deps.services.storage.console;
  const session = await repository.getSessionByTokenHash(hashToken(token));
  if (session === null) return null;
  const now = deps.services.clock.now();
  if (session.expiresAt <= now || session.lastSeenAt + SESSION_IDLE_MS <= now) {
    await repository.deleteSession(session.id);
    return null;
  }
  const [user, membership, account, lock] = await Promise.all([
    repository.getUserById(session.userId),
    repository.getMembership(session.accountId, session.userId),
    deps.services.storage.accounts.getById(session.accountId),
    deps.services.storage.operators.getLock(session.userId),
  ]);
  if (account === null || account.status !== 'enabled') {
    await repository.deleteSession(session.id);
    return null;
  }
  // A user an operator locked out has no session (src/console/operator/user-routes.ts).
  if (user === null || membership === null || lock !== null) return null;
  if (now - session.lastSeenAt >= TOUCH_INTERVAL_MS || session.ip !== context.clientIp) {
    await repository.touchSession(session.id, now, context.clientIp);
  }
  return { session, user, role: membership.role, projects: await projectScopeOf(deps.services.storage, session.accountId, user.id, membership.role) };
}

/**
 * Starts a new session for the user on the account (a fresh random token: whatever session cookie the browser had
 * before is never promoted) and sets its cookie. Returns the session with its CSRF token.
 */
export async function startSession(deps: ConsoleDeps, context: RequestContext, userId: string, accountId: string, ssoConnectionId: string | null = null): Promise<ConsoleSession> {
  const repository = deps.services.storage.console;
  // A user an operator locked out cannot sign in (src/console/operator/user-routes.ts).
  if (await deps.services.storage.operators.getLock(userId) !== null) throw new GatewayError('account_locked', 'This user is locked; contact the operator of this gateway.');
  const previous = readCookies(context.request).get(sessionCookieName(deps));
  if (previous !== undefined && previous.length <= 100) {
    const old = await repository.getSessionByTokenHash(hashToken(previous));
    if (old !== null) await repository.deleteSession(old.id);
  }
  const now = deps.services.clock.now();
  const token = newSecretToken();
  const userAgent = context.request.headers['user-agent'];
  const session: ConsoleSession = {
    id: newId('sess', now),
    tokenHash: hashToken(token),
    userId,
    accountId,
    csrfToken: newSecretToken(),
    ip: context.clientIp,
    userAgent: typeof userAgent === 'string' ? userAgent.slice(0, 400) : '',
    createdAt: now,
    lastSeenAt: now,
    expiresAt: now + SESSION_LIFETIME_MS,
    ssoConnectionId,
  };
  await repository.createSession(session);
  context.response.appendHeader('set-cookie', serializeCookie(sessionCookieName(deps), token, { maxAgeSeconds: SESSION_LIFETIME_MS / 1000, secure: consoleUsesTls(deps) }));
  return session;
}

/** Tells the browser to drop its session cookie. */
export function clearSessionCookie(deps: ConsoleDeps, context: RequestContext): void {
  context.response.appendHeader('set-cookie', serializeCookie(sessionCookieName(deps), '', { maxAgeSeconds: 0, secure: consoleUsesTls(deps) }));
}
