/**
 * Members over real HTTP: an owner invites people by email with a role (a mailed one-time link that expires),
 * accepting makes a new login or attaches an existing one, each role is held to what it may do by the console API
 * itself (every role × a write it must not do answers 403), removing a member ends their sessions at once, keys
 * record the member who made them, and an account keeps an owner. Also the sign-up's referral code and the
 * verification that makes a referred sign-up earn.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AccountRole } from '../../../src/storage/repositories/console-repository.js';
import { type ConsoleClient, linkToken, strongPassword, uniqueEmail, waitForMail } from '../../support/console-client.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway, type SignedUpUser } from './console-gateway.js';

let setup: ConsoleGateway;
let owner: SignedUpUser;

beforeAll(async () => {
  setup = await startConsoleGateway();
  owner = await signUpUser(setup);
});

afterAll(async () => {
  await setup?.close();
});

interface Member { client: ConsoleClient; email: string; userId: string }

/** The owner invites a new person with `role`; the person accepts through the mailed link with a new password. */
async function inviteAndAccept(role: AccountRole, inviter: ConsoleClient = owner.client): Promise<Member> {
  const email = uniqueEmail(role);
  const invited = await inviter.request('POST', '/api/members/invitations', { email, role });
  expect(invited.status, invited.text).toBe(201);
  const mail = await waitForMail(setup.mail, email, /invited you/i);
  expect(mail.text).toContain(`${setup.gateway.consoleUrl}/invitation?token=`);
  const token = linkToken(mail);
  const client = setup.client();
  const lookup = await client.request('POST', '/api/invitations/lookup', { token });
  expect(lookup.body).toMatchObject({ email, role, needs: 'choose_password' });
  const accepted = await client.request<{ user: { id: string; email_verified: boolean }; role: string }>('POST', '/api/invitations/accept', { token, password: strongPassword() });
  expect(accepted.status, accepted.text).toBe(200);
  expect(accepted.body).toMatchObject({ role, user: { email_verified: true }, account: { id: owner.accountId } });
  return { client, email, userId: accepted.body.user.id };
}

describe('invitations', () => {
  it('makes a developer who creates keys recorded as theirs but cannot top up, over the wire', async () => {
    const developer = await inviteAndAccept('developer');
    const key = await developer.client.request<{ key: { id: string } }>('POST', '/api/keys', { name: 'dev key' });
    expect(key.status, key.text).toBe(201);
    const stored = await setup.gateway.gateway.services.storage.keys.getById(key.body.key.id);
    expect(stored?.createdBy).toBe(developer.userId);
    expect(stored?.accountId).toBe(owner.accountId);

    const topUp = await developer.client.request('POST', '/api/console/billing/checkout', { amount_usd: 10 });
    expect(topUp.status, topUp.text).toBe(403);
    expect(topUp.body).toMatchObject({ error: { code: 'forbidden', type: 'permission_error' } });

    const members = await owner.client.request<{ data: Array<{ email: string; role: string }> }>('GET', '/api/members');
    expect(members.body.data).toEqual(expect.arrayContaining([expect.objectContaining({ email: developer.email, role: 'developer' })]));
  });

  it('is used once, and is void when withdrawn or expired', async () => {
    const email = uniqueEmail('once');
    await owner.client.request('POST', '/api/members/invitations', { email, role: 'viewer' });
    const token = linkToken(await waitForMail(setup.mail, email, /invited you/i));
    expect((await setup.client().request('POST', '/api/invitations/accept', { token, password: strongPassword() })).status).toBe(200);
    const again = await setup.client().request('POST', '/api/invitations/accept', { token, password: strongPassword() });
    expect(again.status).toBe(400);
    expect(again.body).toMatchObject({ error: { code: 'invalid_token' } });

    const withdrawnEmail = uniqueEmail('withdrawn');
    const withdrawn = await owner.client.request<{ invitation: { id: string } }>('POST', '/api/members/invitations', { email: withdrawnEmail, role: 'viewer' });
    const withdrawnToken = linkToken(await waitForMail(setup.mail, withdrawnEmail, /invited you/i));
    expect((await owner.client.request('DELETE', `/api/members/invitations/${withdrawn.body.invitation.id}`)).status).toBe(204);
    expect((await setup.client().request('POST', '/api/invitations/accept', { token: withdrawnToken, password: strongPassword() })).body).toMatchObject({ error: { code: 'invalid_token' } });

    const lateEmail = uniqueEmail('late');
    await owner.client.request('POST', '/api/members/invitations', { email: lateEmail, role: 'viewer' });
    const lateToken = linkToken(await waitForMail(setup.mail, lateEmail, /invited you/i));
    setup.shift.offset = 7 * 24 * 3600 * 1000 + 1000;
    try {
      expect((await setup.client().request('POST', '/api/invitations/accept', { token: lateToken, password: strongPassword() })).body).toMatchObject({ error: { code: 'invalid_token' } });
    } finally {
      setup.shift.offset = 0;
    }
  });

  it('attaches an existing login only while signed in as the invited email', async () => {
    const other = await signUpUser(setup);
    await owner.client.request('POST', '/api/members/invitations', { email: other.email, role: 'billing' });
    const token = linkToken(await waitForMail(setup.mail, other.email, /invited you/i));
    const stranger = setup.client();
    expect((await stranger.request('POST', '/api/invitations/lookup', { token })).body).toMatchObject({ needs: 'sign_in', signed_in_as_invitee: false });
    const anonymous = await stranger.request('POST', '/api/invitations/accept', { token, password: strongPassword() });
    expect(anonymous.status).toBe(401);
    const accepted = await other.client.request('POST', '/api/invitations/accept', { token });
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body).toMatchObject({ role: 'billing', account: { id: owner.accountId } });
    // Now on the owner's account as billing: the billing details are theirs to write, keys are not.
    expect((await other.client.request('PUT', '/api/console/billing/profile', { name: 'Billing Person', address: '1 Road', country: 'de' })).status).toBe(200);
    expect((await other.client.request('POST', '/api/keys', { name: 'nope' })).status).toBe(403);
    // Both accounts are theirs to move between; another account is not.
    const accounts = await other.client.request<{ data: Array<{ id: string; role: string; current: boolean }> }>('GET', '/api/session/accounts');
    expect(accounts.body.data).toEqual(expect.arrayContaining([
      expect.objectContaining({ id: other.accountId, role: 'owner', current: false }),
      expect.objectContaining({ id: owner.accountId, role: 'billing', current: true }),
    ]));
    const back = await other.client.request('POST', '/api/session/account', { account_id: other.accountId });
    expect(back.status, back.text).toBe(200);
    expect(back.body).toMatchObject({ role: 'owner', account: { id: other.accountId } });
    expect((await other.client.request('POST', '/api/keys', { name: 'own key' })).status).toBe(201);
    const stranger2 = await signUpUser(setup, { verify: false });
    expect((await other.client.request('POST', '/api/session/account', { account_id: stranger2.accountId })).status).toBe(404);
  });
});

describe('roles are enforced by the API', () => {
  it.each<[AccountRole, string, string, unknown]>([
    ['viewer', 'POST', '/api/keys', { name: 'viewer key' }],
    ['viewer', 'PUT', '/api/console/billing/profile', { name: 'V', address: 'A', country: 'FR' }],
    ['viewer', 'POST', '/api/members/invitations', { email: 'x-viewer@example.com', role: 'viewer' }],
    ['billing', 'POST', '/api/keys', { name: 'billing key' }],
    ['billing', 'POST', '/api/members/invitations', { email: 'x-billing@example.com', role: 'viewer' }],
    ['developer', 'POST', '/api/console/billing/checkout', { amount_usd: 10 }],
    ['developer', 'PUT', '/api/console/billing/profile', { name: 'D', address: 'A', country: 'FR' }],
    ['developer', 'POST', '/api/members/invitations', { email: 'x-dev@example.com', role: 'viewer' }],
    ['viewer', 'PUT', '/api/console/alerts', { alert_balance_usd: 1 }],
    ['billing', 'PUT', '/api/console/alerts', { alert_balance_usd: 1 }],
    ['developer', 'PUT', '/api/console/alerts', { alert_balance_usd: 1 }],
    ['developer', 'POST', '/api/console/billing/redeem', { code: 'x' }],
    ['viewer', 'POST', '/api/console/billing/redeem', { code: 'x' }],
    ['admin', 'POST', '/api/members/invitations', { email: 'x-admin@example.com', role: 'owner' }],
  ])('%s may not %s %s', async (role, method, path, body) => {
    const member = await inviteAndAccept(role);
    const answer = await member.client.request(method, path, body);
    expect(answer.status, answer.text).toBe(403);
    expect(answer.body).toMatchObject({ error: { code: 'forbidden' } });
  });

  it('lets an admin not touch an owner, and keeps the last owner', async () => {
    const admin = await inviteAndAccept('admin');
    expect((await admin.client.request('PATCH', `/api/members/${owner.userId}`, { role: 'viewer' })).status).toBe(403);
    expect((await admin.client.request('DELETE', `/api/members/${owner.userId}`)).status).toBe(403);
    const demote = await owner.client.request('PATCH', `/api/members/${owner.userId}`, { role: 'admin' });
    expect(demote.status).toBe(409);
    expect((await owner.client.request('DELETE', `/api/members/${owner.userId}`)).status).toBe(409);
    // An admin may change a developer's role.
    const developer = await inviteAndAccept('developer');
    expect((await admin.client.request('PATCH', `/api/members/${developer.userId}`, { role: 'viewer' })).body).toMatchObject({ role: 'viewer' });
    expect((await developer.client.request('POST', '/api/keys', { name: 'now a viewer' })).status).toBe(403);
  });

  it('ends a removed member\'s sessions at once', async () => {
    const developer = await inviteAndAccept('developer');
    expect((await developer.client.request('GET', '/api/keys')).status).toBe(200);
    expect((await owner.client.request('DELETE', `/api/members/${developer.userId}`)).status).toBe(204);
    expect((await developer.client.request('GET', '/api/keys')).status).toBe(401);
    const sessions = await setup.gateway.gateway.services.storage.console.listSessions(developer.userId, Date.now());
    expect(sessions.filter((session) => session.accountId === owner.accountId)).toEqual([]);
  });
});

describe('referral codes at sign-up', () => {
  it('attributes a sign-up that carries ?ref= and makes it eligible once the email is verified', async () => {
    const referrals = await owner.client.request<{ code: string }>('GET', '/api/console/referrals');
    expect(referrals.status, referrals.text).toBe(200);
    const client = setup.client();
    const email = uniqueEmail('referred');
    const signedUp = await client.request<{ account: { id: string } }>('POST', '/api/auth/sign-up', { email, password: strongPassword(), ref: referrals.body.code.toLowerCase() });
    expect(signedUp.status, signedUp.text).toBe(201);
    const before = await owner.client.request<{ referred: Array<{ account_id: string; eligible: boolean; reason: string | null }> }>('GET', '/api/console/referrals');
    expect(before.body.referred).toEqual([expect.objectContaining({ account_id: signedUp.body.account.id, eligible: false, reason: 'email_not_verified' })]);

    const token = linkToken(await waitForMail(setup.mail, email, /confirm your email/i));
    expect((await client.request('POST', '/api/auth/verify-email', { token })).status).toBe(200);
    const after = await owner.client.request<{ referred: Array<{ account_id: string; eligible: boolean }> }>('GET', '/api/console/referrals');
    expect(after.body.referred).toEqual([expect.objectContaining({ account_id: signedUp.body.account.id, eligible: true })]);
  });

  it('still signs up with an unknown code, attributing nothing', async () => {
    const answer = await setup.client().request('POST', '/api/auth/sign-up', { email: uniqueEmail('unknown-ref'), password: strongPassword(), ref: 'NOSUCHCODE' });
    expect(answer.status, answer.text).toBe(201);
  });
});
