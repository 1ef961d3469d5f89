/**
 * An operator is reached through the accounts they belong to: disabling one ends their sessions and refuses their
 * sign-in, deleting their only one erases their login. Over real HTTP, through the operator console's admin API:
 * an admin operator may disable, enable or delete no account an operator belongs to (an owner may, for others);
 * no operator does it to their own account; and the only account of an operator is deleted by no one, admin token
 * included, while they hold their role.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkToken, strongPassword, totpCode, uniqueEmail, waitForMail, type ConsoleClient } from '../../support/console-client.js';
import { signUpUser, startConsoleGateway, type ConsoleGateway } from './console-gateway.js';

const STEP_MS = 30_000;

let setup: ConsoleGateway;

interface Operator {
  client: ConsoleClient;
  userId: string;
  email: string;
  password: string;
  accountId: string;
}

const now = (): number => Date.now() + setup.shift.offset;

async function enrolTwoFactor(client: ConsoleClient): Promise<void> {
  const started = await client.request<{ secret: string }>('POST', '/api/me/two-factor/setup');
  expect(started.status, started.text).toBe(200);
  expect((await client.request('POST', '/api/me/two-factor/enable', { code: totpCode(started.body.secret, now()) })).status).toBe(200);
  setup.shift.offset += STEP_MS;
}

async function accountOf(client: ConsoleClient): Promise<string> {
  return (await client.request<{ account: { id: string } }>('GET', '/api/session')).body.account.id;
}

let owner: Operator;
let secondOwner: Operator;
let admin: Operator;

/** An operator invited by the first owner: the mailed link sets the password, then a second factor. */
async function invite(role: 'owner' | 'admin'): Promise<Operator> {
  const email = uniqueEmail(role);
  const invited = await owner.client.request<{ user_id: string }>('POST', '/api/operator/operators', { email, role });
  expect(invited.status, invited.text).toBe(201);
  const client = setup.client();
  const password = strongPassword();
  const token = linkToken(await waitForMail(setup.mail, email, /invited to operate/i));
  expect((await client.request('POST', '/api/auth/password-reset/confirm', { token, password })).status).toBe(204);
  expect((await client.signIn(email, password)).body).toMatchObject({ status: 'signed_in' });
  await enrolTwoFactor(client);
  return { client, userId: invited.body.user_id, email, password, accountId: await accountOf(client) };
}

beforeAll(async () => {
  setup = await startConsoleGateway();
  const client = setup.client();
  const email = uniqueEmail('owner');
  const password = strongPassword();
  const made = await client.request<{ user: { id: string } }>('POST', '/api/operator/bootstrap', { admin_token: setup.gateway.adminToken, email, password });
  expect(made.status, made.text).toBe(201);
  await enrolTwoFactor(client);
  owner = { client, userId: made.body.user.id, email, password, accountId: await accountOf(client) };
  secondOwner = await invite('owner');
  admin = await invite('admin');
});

afterAll(async () => {
  await setup?.close();
});

const bridge = (operator: Operator, method: string, path: string, body?: unknown) => operator.client.request(method, `/api/operator/admin${path}`, body);

describe('the accounts operators belong to', () => {
  it('an admin operator can neither disable, enable nor delete the account of an owner or of another operator', async () => {
    for (const target of [owner, secondOwner]) {
      for (const [method, body] of [['PATCH', { status: 'disabled' }], ['PATCH', { status: 'enabled' }], ['DELETE', undefined]] as const) {
        const answer = await bridge(admin, method, `/accounts/${target.accountId}`, body);
        expect(answer.status, `${method} ${answer.text}`).toBe(method === 'PATCH' && body?.status === 'enabled' ? 200 : 403);
        if (answer.status === 403) expect(answer.body).toMatchObject({ error: { code: 'forbidden' } });
      }
    }
    // The owners are untouched: their sessions answer, they sign in, and the roles stand.
    expect((await owner.client.request('GET', '/api/operator/me')).body).toMatchObject({ role: 'owner' });
    expect((await setup.client().signIn(secondOwner.email, secondOwner.password)).body).toMatchObject({ status: 'two_factor_required' });
    const operators = await owner.client.request<{ data: Array<{ user_id: string; role: string }> }>('GET', '/api/operator/operators');
    expect(operators.body.data.find((row) => row.user_id === secondOwner.userId)).toMatchObject({ role: 'owner' });
    expect((await setup.gateway.admin<{ status: string }>('GET', `/admin/accounts/${owner.accountId}`)).body.status).toBe('enabled');
  });

  it('an admin operator still manages every other account', async () => {
    const customer = await signUpUser(setup);
    expect((await bridge(admin, 'PATCH', `/accounts/${customer.accountId}`, { status: 'disabled' })).status).toBe(200);
    expect((await customer.client.request('GET', '/api/session')).body).toMatchObject({ user: null });
    expect((await bridge(admin, 'PATCH', `/accounts/${customer.accountId}`, { status: 'enabled' })).status).toBe(200);
    expect((await bridge(admin, 'DELETE', `/accounts/${customer.accountId}`)).status).toBe(200);
  });

  it('no operator disables or deletes their own account from the operator console', async () => {
    for (const operator of [owner, admin]) {
      expect((await bridge(operator, 'PATCH', `/accounts/${operator.accountId}`, { status: 'disabled' })).status).toBe(409);
      expect((await bridge(operator, 'DELETE', `/accounts/${operator.accountId}`)).status).toBe(409);
      expect((await operator.client.request('GET', '/api/operator/me')).status).toBe(200);
    }
  });

  it('an owner may disable another operator\'s account, but deleting an operator\'s only account waits until the role is removed', async () => {
    expect((await bridge(owner, 'PATCH', `/accounts/${admin.accountId}`, { status: 'disabled' })).status).toBe(200);
    expect((await admin.client.request('GET', '/api/session')).body).toMatchObject({ user: null });
    expect((await bridge(owner, 'PATCH', `/accounts/${admin.accountId}`, { status: 'enabled' })).status).toBe(200);

    const refused = await bridge(owner, 'DELETE', `/accounts/${secondOwner.accountId}`);
    expect(refused.status, refused.text).toBe(409);
    expect(refused.body).toMatchObject({ error: { code: 'conflict', message: expect.stringContaining('operator role') } });
    // Nor with the admin token.
    expect((await setup.gateway.admin('DELETE', `/admin/accounts/${secondOwner.accountId}`)).status).toBe(409);
    expect((await setup.client().signIn(secondOwner.email, secondOwner.password)).body).toMatchObject({ status: 'two_factor_required' });

    expect((await owner.client.request('DELETE', `/api/operator/operators/${secondOwner.userId}`)).status).toBe(204);
    expect((await bridge(owner, 'DELETE', `/accounts/${secondOwner.accountId}`)).status).toBe(200);
  });
});
