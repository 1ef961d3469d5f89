import { z } from 'zod';
import { isUniqueViolation } from '../../http/admin/admin-guard.js';
import type { RequestContext } from '../../http/request-context.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { parseInput } from '../../management/parse-input.js';
import { describeError } from '../../shared/logger.js';
import { newId } from '../../shared/ids.js';
import { ACCOUNT_ROLES, type AccountRole, type ConsoleUser } from '../../storage/repositories/console-repository.js';
import type { ConsoleInvitation } from '../../storage/repositories/member-repository.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody, sendNoContent } from '../console-route.js';
import { isoTime } from '../../management/time-input.js';
import { accountJson, userJson } from '../console-views.js';
import { countInvitation } from '../mail-limits.js';
import { hashConsolePassword } from '../password-hashing.js';
import { assertStrongPassword, PASSWORD_MAX_LENGTH } from '../password-policy.js';
import { hashToken, newSecretToken } from '../secret-token.js';
import { startSession } from '../session-store.js';
import { consoleRoutes } from '../console-route-table.js';
import type {
  InvitationAnswerJson, InvitationJson, InvitationLookupJson, MemberListJson, MemberRoleAnswerJson, SessionAccountListJson,
} from '../../contract/members.js';
import type { SignedInJson } from '../../contract/account.js';

/** An invitation link works for a week. */
export const INVITATION_TTL_MS = 7 * 24 * 3600 * 1000;

const email = z.email().max(254).transform((value) => value.toLowerCase());
const role = z.enum(ACCOUNT_ROLES as [AccountRole, ...AccountRole[]]);
const inviteSchema = z.object({ email, role }).strict();
const roleSchema = z.object({ role }).strict();
const acceptSchema = z.object({ token: z.string().min(1).max(200), password: z.string().min(1).max(PASSWORD_MAX_LENGTH * 4).optional() }).strict();

function invitationJson(invitation: ConsoleInvitation): InvitationJson {
  return { id: invitation.id, email: invitation.email, role: invitation.role, invited_by: invitation.invitedBy, expires_at: isoTime(invitation.expiresAt), created_at: isoTime(invitation.createdAt) };
}

function invalidInvitation(): GatewayError {
  return new GatewayError('invalid_token', 'This invitation is invalid, used, withdrawn or expired; ask for a new one.', { param: 'token' });
}

/** Mails the invitation link (to the log line without SMTP_URL, as the console's other links). */
async function mailInvitation(deps: ConsoleDeps, to: string, inviter: string, invitedRole: AccountRole, token: string): Promise<void> {
  const { mailer, logger, config } = deps.services;
  const link = `${deps.urls.console()}/invitation?token=${encodeURIComponent(token)}`;
  const subject = `${config.keyBrand}: ${inviter} invited you to their account`;
  if (mailer.kind === 'log') {
    logger.info('console mail not sent (SMTP_URL is not set)', { to, subject, link });
    return;
  }
  const text = `${inviter} invited you to their ${config.keyBrand} account as ${invitedRole}. Accept the invitation here:\n\n${link}\n\n`
    + 'The link works once and expires in 7 days. If you do not know the sender, ignore this mail.\n';
  try {
    await mailer.send({ to, subject, text });
  } catch (error) {
    logger.warn('console mail failed', { to, kind: 'invitation', ...describeError(error) });
  }
}

/**
 * Owners and admins manage members; only an owner makes, changes or removes an owner, and the last owner stays.
 * Throws the refusal, or returns when `actorRole` may move `target` (null: a new person) to `next` (null: removal).
 */
function checkRoleChange(actorRole: AccountRole, target: AccountRole | null, next: AccountRole | null): void {
  if (actorRole !== 'owner' && (target === 'owner' || next === 'owner')) {
    throw new GatewayError('forbidden', 'Only an owner may invite, change or remove an owner.');
  }
}

/** The account's members, invitations by email with a role, and their acceptance. */
export const MEMBER_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock } = deps.services;

  const memberOf = async (accountId: string, userId: string): Promise<AccountRole> => {
    const membership = await storage.console.getMembership(accountId, userId);
    if (membership === null) throw new GatewayError('not_found', 'No such member of this account.');
    return membership.role;
  };
  const keepAnOwner = async (accountId: string, current: AccountRole, next: AccountRole | null): Promise<void> => {
    if (current === 'owner' && next !== 'owner' && (await storage.members.countOwners(accountId)) <= 1) {
      throw new GatewayError('conflict', 'An account keeps at least one owner: make another member owner first.');
    }
  };

  const openInvitation = async (token: string): Promise<ConsoleInvitation> => {
    const invitation = await storage.members.getInvitationByTokenHash(hashToken(token));
    if (invitation === null || invitation.acceptedAt !== null || invitation.revokedAt !== null || invitation.expiresAt <= clock.now()) throw invalidInvitation();
    return invitation;
  };
  return { deps, storage, clock, memberOf, keepAnOwner, openInvitation };
}, [
  { method: 'GET', path: '/api/members', who: 'member', permission: 'members:read', handler: ({ storage, clock }) => async ({ context, active }) => {
    const accountId = active.session.accountId;
    const managing = active.role === 'owner' || active.role === 'admin';
    const [members, invitations] = await Promise.all([
      storage.members.listMembers(accountId),
      managing ? storage.members.listOpenInvitations(accountId, clock.now()) : Promise.resolve([]),
    ]);
    sendJson(context, 200, {
      data: members.map((member) => ({ user_id: member.userId, email: member.email, role: member.role, created_at: isoTime(member.createdAt), you: member.userId === active.user.id })),
      invitations: invitations.map(invitationJson),
      can_manage: managing,
    } satisfies MemberListJson);
  } },

  // A person in several accounts (through invitations) lists them and moves the session to another one.
  { method: 'GET', path: '/api/session/accounts', who: 'member', permission: null, handler: ({ deps, storage }) => async ({ context, active }) => {
    const memberships = await storage.console.listMemberships(active.user.id);
    const accounts = await Promise.all(memberships.map(async (membership) => {
      const account = await accountJson(deps, membership.accountId);
      return account === null ? null : { ...account, role: membership.role, current: membership.accountId === active.session.accountId };
    }));
    sendJson(context, 200, { data: accounts.filter((account) => account !== null) } satisfies SessionAccountListJson);
  } },

  { method: 'POST', path: '/api/session/account', who: 'member', permission: null, handler: ({ deps, storage }) => async ({ context, active }) => {
    const input = parseInput(z.object({ account_id: z.string().min(1).max(200) }).strict(), await readConsoleBody(context));
    const membership = await storage.console.getMembership(input.account_id, active.user.id);
    if (membership === null) throw new GatewayError('not_found', 'You are not a member of that account.', { param: 'account_id' });
    // A session signed in through single sign-on stays one on the other account.
    await signInTo(deps, context, active.user, membership.accountId, membership.role, active.session.ssoConnectionId ?? null);
  } },

  { method: 'POST', path: '/api/members/invitations', who: 'member', permission: 'members:write', handler: ({ deps, storage, clock }) => async ({ context, active }) => {
    const input = parseInput(inviteSchema, await readConsoleBody(context));
    checkRoleChange(active.role, null, input.role);
    const accountId = active.session.accountId;
    if ((await storage.members.listMembers(accountId)).some((member) => member.email === input.email)) {
      throw new GatewayError('conflict', `${input.email} is already a member of this account.`, { param: 'email' });
    }
    await countInvitation(deps.services, active.user.id, input.email);
    const now = clock.now();
    const token = newSecretToken();
    const invitation: ConsoleInvitation = {
      id: newId('inv', now), tokenHash: hashToken(token), accountId, email: input.email, role: input.role, invitedBy: active.user.email,
      expiresAt: now + INVITATION_TTL_MS, acceptedAt: null, acceptedBy: null, revokedAt: null, createdAt: now,
    };
    await storage.members.createInvitation(invitation);
    void mailInvitation(deps, input.email, active.user.email, input.role, token);
    sendJson(context, 201, { invitation: invitationJson(invitation) } satisfies InvitationAnswerJson);
  } },

  { method: 'DELETE', path: '/api/members/invitations/:id', who: 'member', permission: 'members:write', handler: ({ storage, clock }) => async ({ context, active }) => {
    if (!(await storage.members.revokeInvitation(active.session.accountId, context.params.id ?? '', clock.now()))) {
      throw new GatewayError('not_found', 'No open invitation with that id.');
    }
    sendNoContent(context);
  } },

  { method: 'PATCH', path: '/api/members/:userId', who: 'member', permission: 'members:write', handler: ({ storage, memberOf, keepAnOwner }) => async ({ context, active }) => {
    const input = parseInput(roleSchema, await readConsoleBody(context));
    const accountId = active.session.accountId;
    const userId = context.params.userId ?? '';
    const current = await memberOf(accountId, userId);
    checkRoleChange(active.role, current, input.role);
    await keepAnOwner(accountId, current, input.role);
    await storage.members.setRole(accountId, userId, input.role);
    sendJson(context, 200, { user_id: userId, role: input.role } satisfies MemberRoleAnswerJson);
  } },

  { method: 'DELETE', path: '/api/members/:userId', who: 'member', permission: 'members:write', handler: ({ storage, memberOf, keepAnOwner }) => async ({ context, active }) => {
    const accountId = active.session.accountId;
    const userId = context.params.userId ?? '';
    const current = await memberOf(accountId, userId);
    checkRoleChange(active.role, current, null);
    await keepAnOwner(accountId, current, null);
    // Ends the member's sessions on this account in the same transaction.
    await storage.members.removeMember(accountId, userId);
    sendNoContent(context);
  } },

  { method: 'POST', path: '/api/invitations/lookup', who: 'anyone', handler: ({ storage, openInvitation }) => async ({ context, active }) => {
    const input = parseInput(z.object({ token: z.string().min(1).max(200) }).strict(), await readConsoleBody(context));
    const invitation = await openInvitation(input.token);
    const hasUser = (await storage.console.getUserByEmail(invitation.email)) !== null || (await storage.accounts.getByEmail(invitation.email)) !== null;
    sendJson(context, 200, {
      email: invitation.email,
      role: invitation.role,
      invited_by: invitation.invitedBy,
      expires_at: isoTime(invitation.expiresAt),
      // `sign_in`: the person has a console login and accepts while signed in as that email; `choose_password`: a new login.
      needs: hasUser ? 'sign_in' : 'choose_password',
      signed_in_as_invitee: active !== null && active.user.email === invitation.email,
    } satisfies InvitationLookupJson);
  } },

  { method: 'POST', path: '/api/invitations/accept', who: 'anyone', handler: ({ deps, storage, clock, openInvitation }) => async ({ context, active }) => {
    const input = parseInput(acceptSchema, await readConsoleBody(context));
    const invitation = await openInvitation(input.token);
    const now = clock.now();
    const existing = await storage.console.getUserByEmail(invitation.email);
    let user: ConsoleUser;
    let newUser: ConsoleUser | null = null;
    if (existing !== null || (await storage.accounts.getByEmail(invitation.email)) !== null) {
      // A person with a login proves it by being signed in as the invited email (password and second factor passed).
      if (active === null || active.user.email !== invitation.email) {
        throw new GatewayError('unauthenticated', `Sign in as ${invitation.email} first, then open the invitation link again.`);
      }
      user = active.user;
    } else {
      if (input.password === undefined) throw new GatewayError('bad_request', 'Choose a password for your new console login.', { param: 'password' });
      assertStrongPassword(input.password, invitation.email, 'password');
      // The mailed link proves the mailbox: the new login's email is verified.
      newUser = {
        id: newId('usr', now), email: invitation.email, passwordHash: await hashConsolePassword(input.password), emailVerifiedAt: now,
        totpSecret: null, totpPendingSecret: null, totpEnabledAt: null, totpLastStep: null, createdAt: now, updatedAt: now,
      };
      user = newUser;
    }
    let membership;
    try {
      membership = await storage.members.acceptInvitation(hashToken(input.token), user.id, now, newUser);
    } catch (error) {
      if (isUniqueViolation(error)) throw new GatewayError('email_taken', `A login for ${invitation.email} was just created; sign in as it and open the link again.`);
      throw error;
    }
    if (membership === null) throw invalidInvitation();
    await signInTo(deps, context, user, membership.accountId, membership.role);
  } },
]);

async function signInTo(deps: ConsoleDeps, context: RequestContext, user: ConsoleUser, accountId: string, role: AccountRole, ssoConnectionId: string | null = null): Promise<void> {
  const session = await startSession(deps, context, user.id, accountId, ssoConnectionId);
  sendJson(context, 200, { status: 'signed_in', user: userJson(user), account: await accountJson(deps, accountId), role, csrf_token: session.csrfToken } satisfies SignedInJson);
}
