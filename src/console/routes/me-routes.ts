import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import { sendJson } from '../../http/respond.js';
import { parseInput } from '../../management/parse-input.js';
import { countAuthAttempt, countPasswordCheck } from '../auth-limits.js';
import { hashBackupCode, newBackupCodes, normalizeBackupCode } from '../backup-codes.js';
import type { ConsoleDeps } from '../console-deps.js';
import { readConsoleBody, sendNoContent } from '../console-route.js';
import { requireProvenMailbox } from '../mailbox-proof.js';
import { sessionJson } from '../console-views.js';
import { hashConsolePassword, verifyConsolePassword } from '../password-hashing.js';
import { assertStrongPassword, PASSWORD_MAX_LENGTH } from '../password-policy.js';
import { acceptSecondFactor } from '../second-factor.js';
import { clearSessionCookie, SESSION_IDLE_MS, startSession } from '../session-store.js';
import { describeEnrolment, matchTotpStep, newTotpSecret } from '../totp.js';
import { consoleRoutes } from '../console-route-table.js';
import type { SessionListJson, TwoFactorSetupJson } from '../../contract/account.js';

const password = z.string().min(1).max(PASSWORD_MAX_LENGTH * 4);
const changePasswordSchema = z.object({ current_password: password, new_password: password }).strict();
const codeSchema = z.object({ code: z.string().min(1).max(40) }).strict();

function hashedCodes(codes: string[]): string[] {
  return codes.map((code) => hashBackupCode(normalizeBackupCode(code) as string));
}

/** The signed-in user's own password, sessions and second factor. */
export const ME_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const { storage, clock, config } = deps.services;
  return { deps, storage, clock, config };
}, [
  { method: 'POST', path: '/api/me/password', who: 'member', permission: null, handler: ({ deps, storage, clock }) => async ({ context, active }) => {
    const input = parseInput(changePasswordSchema, await readConsoleBody(context));
    // The session's own address: a signed-in user changes their password whatever the email's lock says.
    const attempt = await countPasswordCheck(deps, context, active.user.email, active.user);
    if (!(await verifyConsolePassword(input.current_password, active.user.passwordHash))) {
      throw new GatewayError('invalid_credentials', 'The current password is wrong.', { status: 400, param: 'current_password' });
    }
    await attempt.succeeded();
    assertStrongPassword(input.new_password, active.user.email, 'new_password');
    await storage.console.setPasswordHash(active.user.id, await hashConsolePassword(input.new_password), clock.now());
    // Every other browser signs in again with the new password; this one stays. API keys are not touched.
    await storage.console.deleteUserSessions(active.user.id, active.session.id);
    sendNoContent(context);
  } },

  { method: 'GET', path: '/api/me/sessions', who: 'member', permission: null, handler: ({ storage, clock }) => async ({ context, active }) => {
    const now = clock.now();
    const sessions = (await storage.console.listSessions(active.user.id, now)).filter((session) => session.lastSeenAt + SESSION_IDLE_MS > now);
    sendJson(context, 200, { data: sessions.map((session) => sessionJson(session, active.session.id)) } satisfies SessionListJson);
  } },

  { method: 'DELETE', path: '/api/me/sessions/:id', who: 'member', permission: null, handler: ({ deps, storage }) => async ({ context, active }) => {
    const id = context.params.id ?? '';
    // Only the user's own sessions: another user's id answers as if it did not exist.
    if (!(await storage.console.deleteUserSession(active.user.id, id))) throw new GatewayError('not_found', `No session with id '${id}'.`);
    if (id === active.session.id) clearSessionCookie(deps, context);
    sendNoContent(context);
  } },

  { method: 'POST', path: '/api/me/two-factor/setup', who: 'member', permission: null, handler: ({ deps, storage, clock, config }) => async ({ context, active }) => {
    // A second factor outlives the proof of the mailbox: whoever signed up with another's email must not set one.
    await requireProvenMailbox(deps, active.user, active.session.accountId);
    if (active.user.totpSecret !== null) throw new GatewayError('conflict', 'Two-factor authentication is already on; disable it first to enrol a new device.');
    const secret = newTotpSecret();
    await storage.console.setPendingTotp(active.user.id, secret, clock.now());
    const enrolment = await describeEnrolment(secret, config.keyBrand, active.user.email);
    const setup: TwoFactorSetupJson = { secret: enrolment.secret, otpauth_url: enrolment.otpauthUrl, qr_svg: enrolment.qrSvg };
    sendJson(context, 200, setup);
  } },

  { method: 'POST', path: '/api/me/two-factor/enable', who: 'member', permission: null, handler: ({ deps, storage, clock }) => async ({ context, active }) => {
    const input = parseInput(codeSchema, await readConsoleBody(context));
    await requireProvenMailbox(deps, active.user, active.session.accountId);
    const pending = active.user.totpPendingSecret;
    if (active.user.totpSecret !== null) throw new GatewayError('conflict', 'Two-factor authentication is already on.');
    if (pending === null) throw new GatewayError('conflict', 'Start with POST /api/me/two-factor/setup.');
    const attempt = await countAuthAttempt(deps, context, 'two-factor', active.user.id, active.user);
    const step = matchTotpStep(pending, input.code.replace(/\s/g, ''), clock.now());
    if (step === null) throw new GatewayError('invalid_code', 'The code is wrong or expired; check the device clock and try the next code.', { param: 'code' });
    await attempt.succeeded();
    const codes = newBackupCodes();
    await storage.console.enableTotp(active.user.id, pending, step, hashedCodes(codes), clock.now());
    // A new session for the stronger sign-in; every other session of the user ends.
    await storage.console.deleteUserSessions(active.user.id, null);
    const session = await startSession(deps, context, active.user.id, active.session.accountId);
    sendJson(context, 200, { backup_codes: codes, csrf_token: session.csrfToken });
  } },

  { method: 'POST', path: '/api/me/two-factor/disable', who: 'member', permission: null, handler: ({ deps, storage, clock }) => async ({ context, active }) => {
    const input = parseInput(codeSchema, await readConsoleBody(context));
    if (active.user.totpSecret === null) throw new GatewayError('conflict', 'Two-factor authentication is not on.');
    const attempt = await countAuthAttempt(deps, context, 'two-factor', active.user.id, active.user);
    if (!(await acceptSecondFactor(deps, active.user, input.code, true))) throw new GatewayError('invalid_code', 'The code is wrong, expired or already used.', { param: 'code' });
    await attempt.succeeded();
    await storage.console.disableTotp(active.user.id, clock.now());
    sendNoContent(context);
  } },

  { method: 'POST', path: '/api/me/two-factor/backup-codes', who: 'member', permission: null, handler: ({ deps, storage, clock }) => async ({ context, active }) => {
    const input = parseInput(codeSchema, await readConsoleBody(context));
    if (active.user.totpSecret === null) throw new GatewayError('conflict', 'Two-factor authentication is not on.');
    const attempt = await countAuthAttempt(deps, context, 'two-factor', active.user.id, active.user);
    if (!(await acceptSecondFactor(deps, active.user, input.code, false))) throw new GatewayError('invalid_code', 'The code is wrong, expired or already used.', { param: 'code' });
    await attempt.succeeded();
    const codes = newBackupCodes();
    await storage.console.replaceBackupCodes(active.user.id, hashedCodes(codes), clock.now());
    sendJson(context, 200, { backup_codes: codes });
  } },
]);
