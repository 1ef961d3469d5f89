/**
 * Account pre-hijacking over the console's API. Someone signs up with another person's email and never proves the
 * mailbox: nothing they do may outlive the proof (no invitations, second factor, keys, playground, top-ups, billing
 * details, alerts, plans, redemption, support requests), an invited member does not open what the owner may not,
 * and the real owner's password reset — the first proof of the mailbox — starts the account clean: members,
 * invitations, keys, sessions and the second factor set up before it are gone, and the owner is told by mail.
 * Invitations and support requests are limited per user and per address. On SQLite and on PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVITATION_TTL_MS } from '../../../src/console/routes/member-routes.js';
import { MAIL_LIMITS } from '../../../src/console/mail-limits.js';
import { hashToken, newSecretToken } from '../../../src/console/secret-token.js';
import { newBackupCodes, hashBackupCode, normalizeBackupCode } from '../../../src/console/backup-codes.js';
import { newTotpSecret } from '../../../src/console/totp.js';
import { newId } from '../../../src/shared/ids.js';
import { addRoutedModel, suiteDatabase } from '../../support/gateway-harness.js';
import { type ConsoleClient, linkToken, strongPassword, uniqueEmail, waitForMail } from '../../support/console-client.js';
import { awayFromWindowEdge, signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

const MODEL = 'hijack-sim';

let setup: ConsoleGateway;

beforeAll(async () => {
  setup = await startConsoleGateway({ SUPPORT_EMAIL: 'support@example.com' });
  await addRoutedModel(setup.gateway, { model: MODEL, channel: { name: 'hijack-sim', type: 'simulator', models: [MODEL] } });
});

afterAll(async () => {
  await setup?.close();
});

const storage = () => setup.gateway.gateway.services.storage;

/**
 * An invitation as an earlier release let an unproven account make it (stored as the console stores one), accepted
 * over the wire by a new login with `password`. Returns the member's client.
 */
async function plantMember(accountId: string, invitedBy: string, role: 'owner' | 'developer', email: string, password: string): Promise<ConsoleClient> {
  const now = Date.now();
  const token = newSecretToken();
  await storage().members.createInvitation({
    id: newId('inv', now), tokenHash: hashToken(token), accountId, email, role, invitedBy, expiresAt: now + INVITATION_TTL_MS,
    acceptedAt: null, acceptedBy: null, revokedAt: null, createdAt: now,
  });
  const member = setup.client();
  const accepted = await member.request('POST', '/api/invitations/accept', { token, password });
  expect(accepted.status, accepted.text).toBe(200);
  return member;
}

function expectUnverified(answer: { status: number; body: unknown; text: string }, what: string): void {
  expect(answer.status, `${what}: ${answer.text}`).toBe(403);
  expect(answer.body, what).toMatchObject({ error: { code: 'email_unverified', type: 'permission_error' } });
}

describe(`an account whose mailbox is not proven (${suiteDatabase()})`, () => {
  let squatter: SignedUpUser;

  beforeAll(async () => {
    squatter = await signUpUser(setup, { verify: false });
  });

  it('may make nothing that outlives the proof: invitations, second factor, keys, playground, top-ups, billing, alerts, redemption, support', async () => {
    const invited = uniqueEmail('accomplice');
    const lasting: Array<[string, string, unknown]> = [
      ['POST', '/api/members/invitations', { email: invited, role: 'owner' }],
      ['POST', '/api/me/two-factor/setup', undefined],
      ['POST', '/api/me/two-factor/enable', { code: '123456' }],
      ['POST', '/api/keys', { name: 'squatted' }],
      ['POST', '/api/playground/chat', { model: MODEL, messages: [{ role: 'user', content: 'hello' }] }],
      ['POST', '/api/console/billing/checkout', { amount_usd: 10 }],
      ['PUT', '/api/console/billing/profile', { name: 'Squatter Ltd', address: '1 Any Street', country: 'DE' }],
      ['POST', '/api/console/billing/redeem', { code: 'ABCD-EFGH-JKMN' }],
      ['PUT', '/api/console/alerts', { alert_balance_usd: 1 }],
      ['POST', '/api/console/support/tickets', { subject: 'Hello', category: 'other', message: 'Mail the operator on my behalf.' }],
    ];
    for (const [method, path, body] of lasting) expectUnverified(await squatter.client.request(method, path, body), `${method} ${path}`);
    // Nothing was stored or mailed.
    expect(await storage().members.listOpenInvitations(squatter.accountId, Date.now())).toEqual([]);
    expect((await storage().keys.listByAccount(squatter.accountId, { limit: 10, after: null })).data).toEqual([]);
    expect((await storage().console.getUserById(squatter.userId))?.totpPendingSecret).toBeNull();
    expect(setup.mail.to(invited)).toEqual([]);
    expect(setup.mail.to('support@example.com').filter((mail) => mail.text.includes(squatter.email))).toEqual([]);
    // Reading, signing out and confirming the email stay open.
    expect((await squatter.client.request('GET', '/api/keys')).status).toBe(200);
    expect((await squatter.client.request('GET', '/api/members')).status).toBe(200);
    expect((await squatter.client.request('POST', '/api/auth/verify-email/resend')).status).toBe(202);
  });

  it('does not let an invited member (whose own mailbox is proven) make keys or use the playground on it', async () => {
    const memberEmail = uniqueEmail('member');
    const member = await plantMember(squatter.accountId, squatter.email, 'developer', memberEmail, strongPassword());
    const session = await member.request<{ user: { email_verified: boolean }; account: { id: string } }>('GET', '/api/session');
    expect(session.body).toMatchObject({ user: { email_verified: true }, account: { id: squatter.accountId } });
    expectUnverified(await member.request('POST', '/api/keys', { name: 'through a member' }), 'member key');
    expectUnverified(await member.request('POST', '/api/playground/chat', { model: MODEL, messages: [{ role: 'user', content: 'hello' }] }), 'member playground');
    expect((await storage().keys.listByAccount(squatter.accountId, { limit: 10, after: null })).data).toEqual([]);
  });
});

describe('the whole attack: a squatted sign-up, then the real owner resets the password', () => {
  /** Someone signs up with the victim's email (and never sees the victim's mail). */
  async function squat(victimEmail: string, password: string): Promise<{ attacker: ConsoleClient; accountId: string; squattedUserId: string }> {
    const attacker = setup.client();
    const signedUp = await attacker.signUp(victimEmail, password);
    expect(signedUp.status, signedUp.text).toBe(201);
    return { attacker, accountId: (signedUp.body as { account: { id: string } }).account.id, squattedUserId: (signedUp.body as { user: { id: string } }).user.id };
  }

  it('the squatter can invite no co-owner and turn on no second factor', async () => {
    const victimEmail = uniqueEmail('victim');
    const { attacker, accountId } = await squat(victimEmail, strongPassword());
    const coOwnerEmail = uniqueEmail('co-owner');
    expectUnverified(await attacker.request('POST', '/api/members/invitations', { email: coOwnerEmail, role: 'owner' }), 'invite co-owner');
    expectUnverified(await attacker.request('POST', '/api/me/two-factor/setup'), 'two-factor setup');
    expect(setup.mail.to(coOwnerEmail)).toEqual([]);
    expect((await storage().members.listMembers(accountId)).map((member) => member.email)).toEqual([victimEmail]);
  });

  it('the real owner\'s reset removes what an earlier release let the squatter set up: co-owner, keys, invitation, second factor, sessions', async () => {
    const victimEmail = uniqueEmail('victim');
    const squatterPassword = strongPassword();
    const { attacker, accountId, squattedUserId } = await squat(victimEmail, squatterPassword);
    const coOwnerEmail = uniqueEmail('co-owner');
    // What an earlier release let through, stored as it stored it: an accepted co-owner with a key of their own
    // (made through the admin API on their behalf), an open invitation, and a second factor on the squatted login.
    const coOwner = await plantMember(accountId, victimEmail, 'owner', coOwnerEmail, strongPassword());
    const key = await setup.gateway.admin<{ id: string; key: string }>('POST', `/admin/accounts/${accountId}/keys`, { name: 'co-owner key' });
    expect(key.status).toBe(201);
    const now = Date.now();
    await storage().members.createInvitation({
      id: newId('inv', now), tokenHash: hashToken(newSecretToken()), accountId, email: uniqueEmail('pending'), role: 'admin', invitedBy: victimEmail,
      expiresAt: now + INVITATION_TTL_MS, acceptedAt: null, acceptedBy: null, revokedAt: null, createdAt: now,
    });
    const attackerSecret = newTotpSecret();
    await storage().console.enableTotp(squattedUserId, attackerSecret, 0, newBackupCodes().map((code) => hashBackupCode(normalizeBackupCode(code) as string)), now);
    expect((await fetch(`${setup.gateway.baseURL}/models`, { headers: { authorization: `Bearer ${key.body.key}` } })).status).toBe(200);

    // The victim: the email is taken, so they reset the password through the mailed link and sign in.
    const victim = setup.client();
    const password = strongPassword();
    expect((await victim.signUp(victimEmail, password)).body).toMatchObject({ error: { code: 'email_taken' } });
    expect((await victim.request('POST', '/api/auth/password-reset', { email: victimEmail })).status).toBe(202);
    const reset = linkToken(await waitForMail(setup.mail, victimEmail, /reset your console password/i));
    const confirmed = await victim.request('POST', '/api/auth/password-reset/confirm', { token: reset, password });
    expect(confirmed.status, confirmed.text).toBe(204);
    const signedIn = await victim.signIn(victimEmail, password);
    // Not asked for the squatter's second factor.
    expect(signedIn.body, signedIn.text).toMatchObject({ status: 'signed_in', role: 'owner', user: { email_verified: true, two_factor_enabled: false } });

    const members = await victim.request<{ data: Array<{ user_id: string; role: string }>; invitations: unknown[] }>('GET', '/api/members');
    expect(members.body.data).toEqual([expect.objectContaining({ user_id: squattedUserId, role: 'owner' })]);
    expect(members.body.invitations).toEqual([]);
    const keys = await victim.request<{ data: Array<{ id: string; status: string }> }>('GET', '/api/keys');
    expect(keys.body.data).toEqual([expect.objectContaining({ id: key.body.id, status: 'revoked' })]);
    expect((await fetch(`${setup.gateway.baseURL}/models`, { headers: { authorization: `Bearer ${key.body.key}` } })).status).toBe(401);

    // The co-owner's and the squatter's sessions are over; the co-owner cannot remove the victim.
    expect((await coOwner.request('GET', '/api/session')).body).toMatchObject({ user: null });
    expect((await coOwner.request('DELETE', `/api/members/${squattedUserId}`)).status).toBe(401);
    expect((await attacker.request('GET', '/api/session')).body).toMatchObject({ user: null });
    // The squatter's old password and second factor are worthless.
    expect((await setup.client().signIn(victimEmail, squatterPassword)).status).toBe(401);
    expect((await storage().console.getUserById(squattedUserId))?.totpSecret).toBeNull();

    const told = await waitForMail(setup.mail, victimEmail, /clean start/i);
    expect(told.text).toMatch(/1 other member/);
    expect(told.text).toMatch(/1 open invitation/);
    expect(told.text).toMatch(/1 API key/);
    expect(told.text).toMatch(/two-factor sign-in/);
    // Now proven, the account may make lasting things.
    expect((await victim.request('POST', '/api/keys', { name: 'mine' })).status).toBe(201);
  });

  it('a reset of an account that was verified all along removes nothing and mails nothing more', async () => {
    const owner = await signUpUser(setup);
    const created = await owner.client.request('POST', '/api/keys', { name: 'kept' });
    expect(created.status).toBe(201);
    expect((await owner.client.request('POST', '/api/auth/password-reset', { email: owner.email })).status).toBe(202);
    const token = linkToken(await waitForMail(setup.mail, owner.email, /reset your console password/i));
    expect((await setup.client().request('POST', '/api/auth/password-reset/confirm', { token, password: strongPassword() })).status).toBe(204);
    expect((await storage().keys.listByAccount(owner.accountId, { limit: 10, after: null })).data.map((key) => key.status)).toEqual(['enabled']);
    expect(setup.mail.to(owner.email).filter((mail) => /clean start/i.test(mail.subject))).toEqual([]);
  });
});

// A test may first wait out a window's edge (up to 20 s), then does its work: more than the default 20 s allows.
describe('mail that console users make the gateway send is limited', { timeout: 90_000 }, () => {
  it('invitations: per inviter, and per address invited whoever invites it', async () => {
    await awayFromWindowEdge(3_600_000, 20_000);
    const target = uniqueEmail('popular');
    const limit = MAIL_LIMITS.invitationsPerAddress[0]!.limit;
    const statuses: number[] = [];
    for (let index = 0; index <= limit; index += 1) {
      const inviter = await signUpUser(setup);
      statuses.push((await inviter.client.request('POST', '/api/members/invitations', { email: target, role: 'viewer' })).status);
    }
    expect(statuses).toEqual([...Array.from({ length: limit }, () => 201), 429]);

    const busy = await signUpUser(setup);
    const perUser = MAIL_LIMITS.invitationsPerUser[0]!.limit;
    let last = 0;
    for (let index = 0; index <= perUser; index += 1) last = (await busy.client.request('POST', '/api/members/invitations', { email: uniqueEmail('each'), role: 'viewer' })).status;
    expect(last).toBe(429);
  });

  it('support requests: per user', async () => {
    await awayFromWindowEdge(3_600_000, 10_000);
    const writer = await signUpUser(setup);
    const limit = MAIL_LIMITS.ticketsPerUser[0]!.limit;
    const statuses: number[] = [];
    for (let index = 0; index <= limit; index += 1) {
      statuses.push((await writer.client.request('POST', '/api/console/support/tickets', { subject: `Question ${index}`, category: 'other', message: 'Please help.' })).status);
    }
    expect(statuses).toEqual([...Array.from({ length: limit }, () => 201), 429]);
  });
});
