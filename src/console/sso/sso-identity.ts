import { GatewayError } from '../../errors/gateway-error.js';
import { isUniqueViolation } from '../../http/admin/admin-guard.js';
import { newId } from '../../shared/ids.js';
import type { VerifiedIdentity } from '../../sso/oidc-client.js';
import { ACCOUNT_ROLES, type AccountRole, type ConsoleUser } from '../../storage/repositories/console-repository.js';
import { OPERATOR_ROLES, type OperatorRole } from '../../storage/repositories/operator-repository.js';
import type { SsoConnection } from '../../storage/repositories/sso-repository.js';
import type { ConsoleDeps } from '../console-deps.js';
import { mailCleanStart, startClean } from '../mailbox-proof.js';
import { grantOperator } from '../operator/operator-users.js';
import { syncDirectoryProjects } from '../../projects/directory-projects.js';
import { claimValues, emailDomain, mappedRole } from './sso-connections.js';

/** Stands for "no password": matches no password (neither an argon2 nor a scrypt hash). People made by SSO have none. */
export const NO_PASSWORD = '!none';

/** Roles single sign-on and SCIM may give on an account, highest first: never `owner` (owners are made in the console). */
export const SSO_ACCOUNT_ROLES: readonly AccountRole[] = ACCOUNT_ROLES.filter((role) => role !== 'owner');

/** Who signs in, and on which account the session opens. */
export interface SsoSignIn {
  user: ConsoleUser;
  accountId: string;
}

function refused(message: string): GatewayError {
  return new GatewayError('sso_failed', message);
}

/** The email the provider vouches for: present and `email_verified`, and in the connection's domains when it lists any. */
function verifiedEmail(connection: SsoConnection, identity: VerifiedIdentity): string {
  if (identity.email === null || !identity.email.includes('@')) throw refused('The provider sent no email address.');
  if (!identity.emailVerified) throw refused('The provider does not vouch for the email address (email_verified is not true).');
  if (connection.emailDomains.length > 0 && !connection.emailDomains.includes(emailDomain(identity.email))) {
    throw refused(`The email domain ${emailDomain(identity.email)} is not one this sign-in answers for.`);
  }
  return identity.email;
}

function newSsoUser(email: string, now: number): ConsoleUser {
  return {
    id: newId('usr', now), email, passwordHash: NO_PASSWORD, emailVerifiedAt: now,
    totpSecret: null, totpPendingSecret: null, totpEnabledAt: null, totpLastStep: null, createdAt: now, updatedAt: now,
  };
}

/**
 * A user found by email whose mailbox was never proven may have been made by someone else with this address: the
 * provider's verified email proves it now, so it starts clean as a password reset would (password, second factor,
 * sessions, and what was set up on the account signed up with this email), then counts as verified.
 */
async function claimUnproven(deps: ConsoleDeps, user: ConsoleUser, now: number): Promise<ConsoleUser> {
  if (user.emailVerifiedAt !== null) return user;
  const { storage } = deps.services;
  const removed = await startClean(deps, user);
  await storage.console.setPasswordHash(user.id, NO_PASSWORD, now);
  await storage.console.deleteUserSessions(user.id, null);
  await storage.console.markEmailVerified(user.id, now);
  void mailCleanStart(deps, user.email, removed);
  return (await storage.console.getUserById(user.id)) ?? user;
}

async function bind(deps: ConsoleDeps, connection: SsoConnection, subject: string, user: ConsoleUser, now: number): Promise<void> {
  if (!(await deps.services.storage.sso.bindIdentity(connection.id, subject, user.id, now))) {
    throw refused('Another identity of this provider is already linked to this console user.');
  }
}

/**
 * The operators' sign-in. The provider is the deployment's own (trusted like its configuration): its subject is linked
 * to the console user with the same verified email on first sign-in. Whoever is not yet an operator becomes one only
 * when the role claim maps to a role (or a default role is set); a role the claim maps is applied at every sign-in.
 */
export async function resolveOperator(deps: ConsoleDeps, connection: SsoConnection, identity: VerifiedIdentity): Promise<SsoSignIn> {
  const { storage, clock } = deps.services;
  const now = clock.now();
  const email = verifiedEmail(connection, identity);
  const claimRole = connection.roleClaim === null ? null : mappedRole<OperatorRole>(identity.claims[connection.roleClaim], connection.roleMap, OPERATOR_ROLES);
  const role = claimRole ?? (OPERATOR_ROLES.find((known) => known === connection.jitRole) ?? null);

  const boundId = await storage.sso.getIdentity(connection.id, identity.subject);
  let user = boundId === null ? await storage.console.getUserByEmail(email) : await storage.console.getUserById(boundId);
  let operator = user === null ? null : await storage.operators.get(user.id);
  if (operator === null && role === null) throw refused(`${email} is not an operator of this gateway, and the provider's claims give no operator role.`);
  if (operator?.disabledAt != null) throw new GatewayError('operator_disabled', 'An owner disabled your operator access; ask an owner of the gateway to enable it.');
  if (user !== null && boundId === null) user = await claimUnproven(deps, user, now);
  if (user === null || operator === null || (claimRole !== null && claimRole !== operator.role)) {
    const granted = await grantOperator(storage, { email: user?.email ?? email, passwordHash: user?.passwordHash ?? NO_PASSWORD, role: (claimRole ?? operator?.role ?? role) as OperatorRole, createdBy: null, now });
    user = granted.user;
    operator = await storage.operators.get(user.id);
  }
  if (boundId === null) await bind(deps, connection, identity.subject, user, now);
  else await storage.sso.touchIdentity(connection.id, identity.subject, now);
  const membership = (await storage.console.listMemberships(user.id))[0];
  if (membership === undefined) throw refused('This user is not a member of any account.');
  return { user, accountId: membership.accountId };
}

/**
 * An account's sign-in. The account's provider speaks only for its own people: its subject is linked to a console user
 * only when that user is new (made here, on first sign-in), or belongs to this account alone, so an account's provider
 * can never sign in as someone who also belongs elsewhere. Joining on first sign-in needs a role (from the claim, or
 * the connection's first-sign-in role); someone the account's directory deactivated (SCIM) is refused.
 */
export async function resolveAccountMember(deps: ConsoleDeps, connection: SsoConnection, identity: VerifiedIdentity): Promise<SsoSignIn> {
  const { storage, clock } = deps.services;
  const now = clock.now();
  const accountId = connection.owner;
  const email = verifiedEmail(connection, identity);
  const account = await storage.accounts.getById(accountId);
  if (account === null || account.status !== 'enabled') throw new GatewayError('account_disabled', 'This account is disabled; sign-in is refused.');
  const claimRole = connection.roleClaim === null ? null : mappedRole<AccountRole>(identity.claims[connection.roleClaim], connection.roleMap, SSO_ACCOUNT_ROLES);
  const role = claimRole ?? (SSO_ACCOUNT_ROLES.find((known) => known === connection.jitRole) ?? null);

  const boundId = await storage.sso.getIdentity(connection.id, identity.subject);
  let user: ConsoleUser | null;
  if (boundId !== null) {
    user = await storage.console.getUserById(boundId);
    if (user === null) throw refused('The console user linked to this identity no longer exists.');
  } else {
    user = await storage.console.getUserByEmail(email);
    if (user !== null) {
      const elsewhere = (await storage.console.listMemberships(user.id)).some((membership) => membership.accountId !== accountId);
      if (elsewhere || (await storage.operators.get(user.id)) !== null) {
        throw refused(`A console user with the email ${email} belongs to other accounts too; they sign in with their password.`);
      }
    }
  }
  const provisioned = user === null ? null : await storage.scim.getUserByConsoleUser(accountId, user.id);
  if (provisioned !== null && !provisioned.active) throw refused("This account's directory has deactivated you.");
  const membership = user === null ? null : await storage.console.getMembership(accountId, user.id);
  if (membership === null && role === null) throw refused(`${email} is not a member of this account, and it lets no one join on first sign-in.`);
  if (user !== null && boundId === null) user = await claimUnproven(deps, user, now);

  if (user === null) {
    user = newSsoUser(email, now);
    try {
      await storage.console.createUser(user, { accountId, userId: user.id, role: role as AccountRole, createdAt: now });
    } catch (error) {
      if (isUniqueViolation(error)) throw refused('Someone signed in with this email at the same moment; try again.');
      throw error;
    }
  } else if (membership === null || (claimRole !== null && membership.role !== 'owner' && membership.role !== claimRole)) {
    // The claim's role applies at every sign-in; an owner stays an owner.
    await storage.scim.setMembership(accountId, user.id, (claimRole ?? membership?.role ?? role) as AccountRole, now);
  }
  if (connection.roleClaim !== null) {
    // The claim's project grants apply at every sign-in, as its role does.
    await syncDirectoryProjects(storage.projects, accountId, user.id, claimValues(identity.claims[connection.roleClaim]), connection.roleMap, now);
  }
  if (boundId === null) await bind(deps, connection, identity.subject, user, now);
  else await storage.sso.touchIdentity(connection.id, identity.subject, now);
  return { user, accountId };
}
