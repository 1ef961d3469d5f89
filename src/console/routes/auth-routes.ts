import { z } from 'zod';
import { describeError } from '../../shared/logger.js';
import { grantSignUpCredit } from '../../sign-up-credit/grant-sign-up-credit.js';
import { signUpAddressHash } from '../../sign-up-credit/sign-up-identity.js';
import { isUniqueViolation } from '../../http/admin/admin-guard.js';
import type { RequestContext } from '../../http/request-context.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { newAccountRecord } from '../../management/account-input.js';
import { parseInput } from '../../management/parse-input.js';
import { newId } from '../../shared/ids.js';
import type { ConsoleUser } from '../../storage/repositories/console-repository.js';
import { countAuthAttempt, countPasswordCheck } from '../auth-limits.js';
import type { ConsoleDeps } from '../console-deps.js';
import { sendConsoleMail } from '../console-mails.js';
import { readConsoleBody, sendNoContent } from '../console-route.js';
import { mailCleanStart, startClean } from '../mailbox-proof.js';
import { accountJson, userJson } from '../console-views.js';
import { csrfTokenFor } from '../csrf.js';
import { operatorStanding } from '../operator/operator-route.js';
import { burnPasswordCheck, hashConsolePassword, verifyConsolePassword } from '../password-hashing.js';
import { assertStrongPassword, PASSWORD_MAX_LENGTH } from '../password-policy.js';
import { acceptSecondFactor } from '../second-factor.js';
import { clearSessionCookie, startSession } from '../session-store.js';
import { assertPasswordSignInAllowed } from '../sso/password-sign-in.js';
import { hashToken, newSecretToken } from '../secret-token.js';
import { consoleRoutes } from '../console-route-table.js';
import type { ConsoleSessionJson, SignedInJson, SignInResultJson } from '../../contract/account.js';

const MINUTE_MS = 60_000;
const VERIFY_EMAIL_TTL_MS = 24 * 60 * MINUTE_MS;
const PASSWORD_RESET_TTL_MS = 30 * MINUTE_MS;
const TWO_FACTOR_CHALLENGE_TTL_MS = 5 * MINUTE_MS;

const email = z.email().max(254).transform((value) => value.toLowerCase());
// Length and strength are judged by the policy (400 weak_password); the schema only bounds the input.
const password = z.string().min(1).max(PASSWORD_MAX_LENGTH * 4);
const credentialsSchema = z.object({ email, password }).strict();
// The `ref` of a referral link (/signup?ref=CODE), carried through sign-up by the web app.
const signUpSchema = z.object({ email, password, ref: z.string().trim().max(64).optional() }).strict();
const tokenSchema = z.object({ token: z.string().min(1).max(200) }).strict();
const challengeSchema = z.object({ challenge: z.string().min(1).max(200), code: z.string().min(1).max(40) }).strict();
const resetRequestSchema = z.object({ email }).strict();
const resetConfirmSchema = z.object({ token: z.string().min(1).max(200), password }).strict();

/** Issues a single-use token of `kind` for the user; returns the token (only its hash is stored). */
export async function issueToken(deps: ConsoleDeps, userId: string, kind: 'verify-email' | 'password-reset' | 'two-factor-challenge', ttlMs: number): Promise<string> {
  const now = deps.services.clock.now();
  const token = newSecretToken();
  await deps.services.storage.console.createToken({ tokenHash: hashToken(token), kind, userId, expiresAt: now + ttlMs, createdAt: now });
  return token;
}

/** Mails go out after the answer: a slow mail server neither delays the page nor tells who has an account. */
function mailLater(deps: ConsoleDeps, kind: 'verify-email' | 'password-reset', to: string, token: string): void {
  void sendConsoleMail(deps, kind, to, token);
}

/** The signed-in answer: a new session on the user's first account. */
async function signIn(deps: ConsoleDeps, context: RequestContext, user: ConsoleUser, status: number): Promise<void> {
  const memberships = await deps.services.storage.console.listMemberships(user.id);
  const membership = memberships[0];
  if (membership === undefined) throw new GatewayError('forbidden', 'This user is not a member of any account.');
  const account = await deps.services.storage.accounts.getById(membership.accountId);
  if (account === null || account.status !== 'enabled') {
    throw new GatewayError('account_disabled', 'This account is disabled; sign-in is refused. Ask the gateway\'s operator to enable it.');
  }
  const session = await startSession(deps, context, user.id, membership.accountId);
  sendJson(context, status, {
    status: 'signed_in',
    user: userJson(user),
    account: await accountJson(deps, membership.accountId),
    role: membership.role,
    csrf_token: session.csrfToken,
  } satisfies SignedInJson);
}

/** Stands for "no password yet": matches no password (it is neither an argon2 nor a scrypt hash). */
const NO_PASSWORD = '!none';

/**
 * The console user of an account made through the admin API, made on first use: owner of that account, its email
 * taken as verified (the operator entered it), with the account's password hash (scrypt, replaced by argon2id at
 * the first successful sign-in). At sign-in only accounts with a password are adopted; a password reset adopts an
 * account without one too, so its owner can choose a password through the mailed link.
 */
async function adoptAdminAccount(deps: ConsoleDeps, emailAddress: string, withoutPassword: boolean): Promise<ConsoleUser | null> {
  const { storage, clock } = deps.services;
  const account = await storage.accounts.getByEmail(emailAddress);
  if (account === null || (account.passwordHash === null && !withoutPassword)) return null;
  const now = clock.now();
  const user: ConsoleUser = {
    id: newId('usr', now), email: emailAddress, passwordHash: account.passwordHash ?? NO_PASSWORD, emailVerifiedAt: now,
    totpSecret: null, totpPendingSecret: null, totpEnabledAt: null, totpLastStep: null, createdAt: now, updatedAt: now,
  };
  try {
    await storage.console.createUser(user, { accountId: account.id, userId: user.id, role: 'owner', createdAt: now });
  } catch (error) {
    // Another request adopted it first.
    if (isUniqueViolation(error)) return storage.console.getUserByEmail(emailAddress);
    throw error;
  }
  return user;
}

/**
 * Records that the new account came through a referral link. An unknown or own code never fails the sign-up: the
 * account exists either way, and the referral page simply does not count it.
 */
async function attributeReferral(deps: ConsoleDeps, accountId: string, code: string, ip: string): Promise<void> {
  const result = await deps.services.commerce.referrals.attributeSignUp({ referredAccountId: accountId, code, ip, emailVerified: false });
  if (!result.attributed) deps.services.logger.info('sign-up referral code not attributed', { account: accountId, reason: result.reason });
}

export const AUTH_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock, config } = deps.services;
  return { deps, storage, clock, config };
}, [
  { method: 'GET', path: '/api/session', who: 'anyone', handler: ({ deps }) => async ({ context, active }) => {
    sendJson(context, 200, {
      user: active === null ? null : userJson(active.user),
      account: active === null ? null : await accountJson(deps, active.session.accountId),
      role: active?.role ?? null,
      operator: active === null ? null : await operatorStanding(deps, active),
      csrf_token: csrfTokenFor(deps, context, active),
    } satisfies ConsoleSessionJson);
  } },

  { method: 'POST', path: '/api/auth/sign-up', who: 'anyone', handler: ({ deps, storage, clock, config }) => async ({ context }) => {
    if (!config.consoleSignUp) throw new GatewayError('forbidden', 'Sign-up is closed on this gateway; ask its operator for an account.');
    const input = parseInput(signUpSchema, await readConsoleBody(context));
    await countAuthAttempt(deps, context, 'sign-up', input.email);
    assertStrongPassword(input.password, input.email, 'password');
    if (await storage.console.getUserByEmail(input.email) !== null || await storage.accounts.getByEmail(input.email) !== null) {
      throw new GatewayError('email_taken', 'An account with this email already exists; sign in or reset its password.', { param: 'email' });
    }
    const now = clock.now();
    const account = newAccountRecord(newId('acct', now), input.email, null, undefined, now);
    const user: ConsoleUser = {
      id: newId('usr', now), email: input.email, passwordHash: await hashConsolePassword(input.password), emailVerifiedAt: null,
      totpSecret: null, totpPendingSecret: null, totpEnabledAt: null, totpLastStep: null, createdAt: now, updatedAt: now,
    };
    try {
      await storage.accounts.create(account);
      await storage.console.createUser(user, { accountId: account.id, userId: user.id, role: 'owner', createdAt: now });
    } catch (error) {
      if (isUniqueViolation(error)) throw new GatewayError('email_taken', 'An account with this email already exists; sign in or reset its password.', { param: 'email' });
      throw error;
    }
    // The sign-up's address, hashed: the sign-up credit is given once per address (and per mailbox) at verification.
    await storage.signUpCredits.recordSignUpAddress(account.id, signUpAddressHash(context.clientIp), now);
    if (input.ref !== undefined && input.ref !== '') await attributeReferral(deps, account.id, input.ref, context.clientIp);
    mailLater(deps, 'verify-email', user.email, await issueToken(deps, user.id, 'verify-email', VERIFY_EMAIL_TTL_MS));
    await signIn(deps, context, user, 201);
  } },

  { method: 'POST', path: '/api/auth/verify-email', who: 'anyone', handler: ({ deps, storage, clock }) => async ({ context }) => {
    const input = parseInput(tokenSchema, await readConsoleBody(context));
    const now = clock.now();
    const userId = await storage.console.consumeToken(hashToken(input.token), 'verify-email', now);
    if (userId === null) throw new GatewayError('invalid_token', 'This verification link is invalid, used or expired; ask for a new one.', { param: 'token' });
    await storage.console.markEmailVerified(userId, now);
    const user = await storage.console.getUserById(userId);
    if (user === null) throw new GatewayError('invalid_token', 'This verification link is invalid, used or expired.', { param: 'token' });
    // Once its owner's mailbox is proven, a referred account earns its referrer's reward, and an account made by
    // console sign-up gets the sign-up credit. The email is verified either way: a credit that fails is logged.
    for (const membership of await storage.console.listMemberships(userId)) {
      if (membership.role !== 'owner') continue;
      await deps.services.commerce.referrals.confirmEmail(membership.accountId);
      await grantSignUpCredit(deps.services, { accountId: membership.accountId, email: user.email, verifiedFromIp: context.clientIp }).catch((error: unknown) => {
        deps.services.logger.warn('sign-up credit failed', { account: membership.accountId, ...describeError(error) });
      });
    }
    sendJson(context, 200, { user: userJson(user) });
  } },

  { method: 'POST', path: '/api/auth/verify-email/resend', who: 'member', permission: null, handler: ({ deps }) => async ({ context, active }) => {
    if (active.user.emailVerifiedAt === null) {
      await countAuthAttempt(deps, context, 'password-reset', `verify:${active.user.id}`);
      mailLater(deps, 'verify-email', active.user.email, await issueToken(deps, active.user.id, 'verify-email', VERIFY_EMAIL_TTL_MS));
    }
    sendNoContent(context, 202);
  } },

  { method: 'POST', path: '/api/auth/sign-in', who: 'anyone', handler: ({ deps, storage, clock }) => async ({ context }) => {
    const input = parseInput(credentialsSchema, await readConsoleBody(context));
    const user = (await storage.console.getUserByEmail(input.email)) ?? (await adoptAdminAccount(deps, input.email, false));
    const attempt = await countPasswordCheck(deps, context, input.email, user);
    const wrong = (): GatewayError => (attempt.locked ? attempt.lockedError() : new GatewayError('invalid_credentials', 'The email or password is wrong.'));
    if (user === null) {
      await burnPasswordCheck(input.password);
      throw wrong();
    }
    // A member whose account requires single sign-on for their email domain never signs in with a password.
    await assertPasswordSignInAllowed(deps, user);
    if (!(await verifyConsolePassword(input.password, user.passwordHash))) throw wrong();
    // A locked email lets the right password through only to the second factor.
    if (attempt.locked && user.totpSecret === null) throw attempt.lockedError();
    await attempt.succeeded();
    if (!user.passwordHash.startsWith('$argon2id$')) await storage.console.setPasswordHash(user.id, await hashConsolePassword(input.password), clock.now());
    if (user.totpSecret !== null) {
      const challenge = await issueToken(deps, user.id, 'two-factor-challenge', TWO_FACTOR_CHALLENGE_TTL_MS);
      sendJson(context, 200, { status: 'two_factor_required', challenge } satisfies SignInResultJson);
      return;
    }
    await signIn(deps, context, user, 200);
  } },

  { method: 'POST', path: '/api/auth/sign-in/two-factor', who: 'anyone', handler: ({ deps, storage, clock }) => async ({ context }) => {
    const input = parseInput(challengeSchema, await readConsoleBody(context));
    const challengeHash = hashToken(input.challenge);
    const userId = await storage.console.peekToken(challengeHash, 'two-factor-challenge', clock.now());
    if (userId === null) throw new GatewayError('invalid_token', 'The sign-in has expired; enter your email and password again.', { param: 'challenge' });
    const user = await storage.console.getUserById(userId);
    const attempt = await countAuthAttempt(deps, context, 'two-factor', userId, user);
    if (user === null || user.totpSecret === null) throw new GatewayError('invalid_token', 'The sign-in has expired; enter your email and password again.', { param: 'challenge' });
    if (!(await acceptSecondFactor(deps, user, input.code, true))) throw new GatewayError('invalid_code', 'The code is wrong, expired or already used.', { param: 'code' });
    if (await storage.console.consumeToken(challengeHash, 'two-factor-challenge', clock.now()) === null) {
      throw new GatewayError('invalid_token', 'The sign-in has expired; enter your email and password again.', { param: 'challenge' });
    }
    await attempt.succeeded();
    await signIn(deps, context, user, 200);
  } },

  { method: 'POST', path: '/api/auth/sign-out', who: 'anyone', handler: ({ deps, storage }) => async ({ context, active }) => {
    if (active !== null) await storage.console.deleteSession(active.session.id);
    clearSessionCookie(deps, context);
    sendNoContent(context);
  } },

  { method: 'POST', path: '/api/auth/sign-out-everywhere', who: 'member', permission: null, handler: ({ deps, storage }) => async ({ context, active }) => {
    await storage.console.deleteUserSessions(active.user.id, null);
    clearSessionCookie(deps, context);
    sendNoContent(context);
  } },

  { method: 'POST', path: '/api/auth/password-reset', who: 'anyone', handler: ({ deps, storage }) => async ({ context }) => {
    const input = parseInput(resetRequestSchema, await readConsoleBody(context));
    await countAuthAttempt(deps, context, 'password-reset', input.email);
    const user = (await storage.console.getUserByEmail(input.email)) ?? (await adoptAdminAccount(deps, input.email, true));
    if (user !== null) mailLater(deps, 'password-reset', user.email, await issueToken(deps, user.id, 'password-reset', PASSWORD_RESET_TTL_MS));
    sendNoContent(context, 202);
  } },

  { method: 'POST', path: '/api/auth/password-reset/confirm', who: 'anyone', handler: ({ deps, storage, clock }) => async ({ context }) => {
    const input = parseInput(resetConfirmSchema, await readConsoleBody(context));
    const tokenHash = hashToken(input.token);
    const invalid = (): GatewayError => new GatewayError('invalid_token', 'This reset link is invalid, used or expired; ask for a new one.', { param: 'token' });
    const userId = await storage.console.peekToken(tokenHash, 'password-reset', clock.now());
    const user = userId === null ? null : await storage.console.getUserById(userId);
    if (user === null) throw invalid();
    assertStrongPassword(input.password, user.email, 'password');
    const passwordHash = await hashConsolePassword(input.password);
    const now = clock.now();
    if (await storage.console.consumeToken(tokenHash, 'password-reset', now) === null) throw invalid();
    await storage.console.setPasswordHash(user.id, passwordHash, now);
    await storage.console.retireTokens(user.id, 'password-reset', now);
    await storage.console.deleteUserSessions(user.id, null);
    // Opening the mailed link proves the mailbox. The first proof starts the account clean: what was set up before
    // it may have been set up by whoever signed up with this email.
    if (user.emailVerifiedAt === null) {
      const removed = await startClean(deps, user);
      await storage.console.markEmailVerified(user.id, now);
      void mailCleanStart(deps, user.email, removed);
    }
    clearSessionCookie(deps, context);
    sendNoContent(context);
  } },
]);
