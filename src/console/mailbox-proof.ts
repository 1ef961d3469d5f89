import { GatewayError } from '../errors/gateway-error.js';
import { describeError } from '../shared/logger.js';
import type { ConsoleUser } from '../storage/repositories/console-repository.js';
import type { ConsoleDeps } from './console-deps.js';
import type { ConsolePermission } from './roles.js';

/**
 * Until the mailbox of an account is proven, nothing that would outlive the proof may be made on it: someone who
 * signed up with another person's email must not leave keys, members, invitations or a second factor for the real
 * owner to inherit. The routes of these permissions, when they change something, need a proven mailbox; so do
 * turning on two-factor sign-in and writing to support (each names the check itself).
 */
const LASTING_PERMISSIONS: ReadonlySet<ConsolePermission> = new Set(['keys:write', 'playground:use', 'billing:write', 'members:write', 'alerts:write', 'webhooks:manage', 'mcp:manage', 'guardrails:manage']);

export function makesLastingChanges(permission: ConsolePermission | null): boolean {
  return permission !== null && LASTING_PERMISSIONS.has(permission);
}

/**
 * Whether `user` may make lasting changes on the account: their own email is confirmed, and so is the email of the
 * account's own login (the person who signed up with it; an account made through the admin API has none that is
 * unconfirmed). An invited member's link proves their mailbox, not the account's.
 */
export async function mailboxProven(deps: ConsoleDeps, user: ConsoleUser, accountId: string): Promise<boolean> {
  if (user.emailVerifiedAt === null) return false;
  const account = await deps.services.storage.accounts.getById(accountId);
  if (account === null) return false;
  if (account.email === user.email) return true;
  const accountLogin = await deps.services.storage.console.getUserByEmail(account.email);
  return accountLogin === null || accountLogin.emailVerifiedAt !== null;
}

/** 403 `email_unverified` unless `user` may make lasting changes on the account. */
export async function requireProvenMailbox(deps: ConsoleDeps, user: ConsoleUser, accountId: string): Promise<void> {
  if (await mailboxProven(deps, user, accountId)) return;
  if (user.emailVerifiedAt === null) {
    throw new GatewayError('email_unverified', 'Confirm your email address first (open the link we mailed you): until then keys, members, two-factor sign-in, top-ups and support requests stay closed.');
  }
  throw new GatewayError('email_unverified', 'The owner of this account has not confirmed its email address yet: until they do, keys, members, top-ups and support requests stay closed.');
}

/** What a clean start removed from a mailbox proven late. */
export interface CleanStart {
  members: number;
  invitations: number;
  keys: number;
  secondFactor: boolean;
}

/**
 * A password reset proved the mailbox of a user who had never confirmed it: whatever was set up before — by whoever
 * signed up with this email — goes. On the account signed up with this email: the other members (and their
 * sessions), open invitations and keys; and the user's second factor. The user's sessions are ended by the reset.
 */
export async function startClean(deps: ConsoleDeps, user: ConsoleUser): Promise<CleanStart> {
  const { storage, clock, keys } = deps.services;
  const now = clock.now();
  const removed: CleanStart = { members: 0, invitations: 0, keys: 0, secondFactor: user.totpSecret !== null };
  // The account signed up with this email: its login is owner again (whatever was changed) and its only member.
  const account = await storage.accounts.getByEmail(user.email);
  if (account !== null && account.status !== 'deleted') {
    const cleared = await storage.members.keepOnlyOwner(account.id, user.id, now);
    removed.members = cleared.members.length;
    removed.invitations = cleared.invitations;
    removed.keys = cleared.keys;
    if (cleared.keys > 0) await keys.invalidateAccount(account.id);
  }
  if (user.totpSecret !== null || user.totpPendingSecret !== null) {
    await storage.console.disableTotp(user.id, now);
  }
  return removed;
}

/** Tells the owner what a clean start removed (nothing is sent when it removed nothing). */
export async function mailCleanStart(deps: ConsoleDeps, to: string, removed: CleanStart): Promise<void> {
  const parts = [
    removed.members > 0 ? `${removed.members} other member${removed.members === 1 ? '' : 's'}` : null,
    removed.invitations > 0 ? `${removed.invitations} open invitation${removed.invitations === 1 ? '' : 's'}` : null,
    removed.keys > 0 ? `${removed.keys} API key${removed.keys === 1 ? '' : 's'}` : null,
    removed.secondFactor ? 'two-factor sign-in' : null,
  ].filter((part): part is string => part !== null);
  if (parts.length === 0) return;
  const { mailer, logger, config } = deps.services;
  const subject = `${config.keyBrand}: your account was reset to a clean start`;
  const text = 'Your console password was reset. The email address of this account had never been confirmed before, so what had been '
    + `set up on it until now was removed: ${parts.join(', ')}. If you did not set these up, someone signed up with your address before you; `
    + `they have no access any more. Sign in at ${deps.urls.console()}/sign-in and set up what you need again.\n`;
  if (mailer.kind === 'log') {
    logger.info('console mail not sent (SMTP_URL is not set)', { to, subject });
    return;
  }
  try {
    await mailer.send({ to, subject, text });
  } catch (error) {
    logger.warn('console mail failed', { to, kind: 'clean-start', ...describeError(error) });
  }
}
