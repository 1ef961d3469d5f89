/**
 * Alerts end to end: a real gateway (ALERT_CHECK_SECONDS=1) mails a real SMTP server (smtp-server on
 * 127.0.0.1) exactly once per crossing while requests keep running, re-arms after a top-up, alerts on quota percent,
 * writes mails to the log when SMTP_URL is unset, and keeps retrying a mail while the SMTP server is down without
 * losing or doubling it (and without logging the SMTP password).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { SmtpCapture } from '../../support/smtp-capture.js';
import { addSimulatorModel, admin, chat, sleep } from '../admin/helpers.js';
import { freePort, waitUntil } from '../cli/cli-process.js';

const MODEL = 'alerts-sim';
/** Each request costs exactly $0.50, whatever its tokens. */
const PRICING = { per_request: 0.5 };

async function newAccount(gateway: TestGateway, balanceUsd: number, key: Record<string, unknown> = {}): Promise<{ id: string; email: string; key: string; keyId: string }> {
  const email = `alerts-${randomBytes(5).toString('hex')}@example.com`;
  const account = await admin<{ id: string }>(gateway, 'POST', '/admin/accounts', { email });
  expect(account.status, account.text).toBe(201);
  if (balanceUsd !== 0) expect((await admin(gateway, 'POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: balanceUsd })).status).toBe(200);
  const created = await admin<{ id: string; key: string }>(gateway, 'POST', `/admin/accounts/${account.body.id}/keys`, key);
  expect(created.status, created.text).toBe(201);
  return { id: account.body.id, email, key: created.body.key, keyId: created.body.id };
}

async function setAlerts(gateway: TestGateway, accountId: string, settings: Record<string, unknown>): Promise<Record<string, unknown>> {
  const answer = await admin(gateway, 'PUT', `/admin/accounts/${accountId}/alerts`, settings);
  expect(answer.status, answer.text).toBe(200);
  return answer.body;
}

/** `count` requests, `parallel` at a time, with a pause between rounds so several alert checks see them. */
async function spend(gateway: TestGateway, key: string, count: number, parallel: number, pauseMs: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let sent = 0; sent < count; sent += parallel) {
    const round = await Promise.all(Array.from({ length: Math.min(parallel, count - sent) }, () => chat(gateway, key, MODEL)));
    statuses.push(...round.map((answer) => answer.status));
    await sleep(pauseMs);
  }
  return statuses;
}

async function alertStates(gateway: TestGateway, accountId: string): Promise<Array<{ kind: string; state: string; subject_id: string }>> {
  const answer = await admin<{ alerts: Array<{ kind: string; state: string; subject_id: string }> }>(gateway, 'GET', `/admin/accounts/${accountId}/alerts`);
  expect(answer.status, answer.text).toBe(200);
  return answer.body.alerts;
}

describe('alert mails over SMTP', () => {
  const smtp = new SmtpCapture();
  let gateway: TestGateway;

  beforeAll(async () => {
    await smtp.start();
    gateway = await startTestGateway({ env: { SMTP_URL: smtp.url(), ALERT_CHECK_SECONDS: '1', MAIL_FROM: 'Gateway Alerts <alerts@gateway.test>' } });
    await addSimulatorModel(gateway, MODEL, PRICING);
  });

  afterAll(async () => {
    await gateway?.close();
    await smtp.stop();
  });

  it('balance: exactly one mail per crossing while requests run, and a second one after a top-up re-armed it', async () => {
    const account = await newAccount(gateway, 10);
    const settings = await setAlerts(gateway, account.id, { alert_balance_usd: 8 });
    expect(settings).toMatchObject({ account_id: account.id, alert_balance_usd: 8, alert_quota_percent: null, alerts: [] });

    // 12 requests over ~3 s: funds go 10 → 4, crossing 8 at the 5th; the checker runs about three times meanwhile.
    expect(await spend(gateway, account.key, 12, 3, 700)).toEqual(Array(12).fill(200));
    await waitUntil(() => smtp.to(account.email).length >= 1, 10_000, 'the balance alert mail');
    await sleep(2500);
    const first = smtp.to(account.email);
    expect(first).toHaveLength(1);
    expect(first[0]?.from).toBe('alerts@gateway.test');
    expect(first[0]?.subject).toMatch(/^Balance alert: funds left \$\d+\.\d{2}, below \$8\.00$/);
    expect(first[0]?.text).toContain(`your account ${account.email}`);
    expect(first[0]?.raw).not.toContain(account.key);
    expect((await alertStates(gateway, account.id))[0]).toMatchObject({ kind: 'balance', state: 'notified', subject_id: account.id });

    // A top-up over the threshold re-arms the alert; spending below it again is a new crossing, mailed once.
    expect((await admin(gateway, 'POST', `/admin/accounts/${account.id}/credits`, { amount_usd: 10 })).status).toBe(200);
    await waitUntil(async () => (await alertStates(gateway, account.id))[0]?.state === 'armed', 10_000, 'the alert re-armed');
    expect(smtp.to(account.email)).toHaveLength(1);
    expect(await spend(gateway, account.key, 13, 4, 500)).toEqual(Array(13).fill(200));
    await waitUntil(() => smtp.to(account.email).length >= 2, 10_000, 'the second balance alert mail');
    await sleep(2500);
    expect(smtp.to(account.email)).toHaveLength(2);
    expect(smtp.to(account.email)[1]?.subject).toContain('below $8');
  });

  it('key quota: one mail when a key reaches the percent of its quota, naming the key by hint only', async () => {
    const account = await newAccount(gateway, 100, { name: 'nightly', quota_usd: 4 });
    await setAlerts(gateway, account.id, { alert_quota_percent: 50 });
    // $0.50 a request: $1.50 is 37.5 %, nothing yet.
    expect(await spend(gateway, account.key, 3, 3, 0)).toEqual([200, 200, 200]);
    await sleep(2200);
    expect(smtp.to(account.email)).toHaveLength(0);
    // $2.50 is past 50 %.
    expect(await spend(gateway, account.key, 2, 2, 0)).toEqual([200, 200]);
    await waitUntil(() => smtp.to(account.email).length >= 1, 10_000, 'the quota alert mail');
    await sleep(2200);
    const mails = smtp.to(account.email);
    expect(mails).toHaveLength(1);
    const hint = `sk-…${account.key.slice(-4)}`;
    expect(mails[0]?.subject).toBe(`Quota alert: API key "nightly" (${hint}) reached 50% of its quota`);
    expect(mails[0]?.text).toContain('of its $4.00 quota (alert at 50%, $2.00)');
    expect(mails[0]?.raw).not.toContain(account.key);
    const states = await alertStates(gateway, account.id);
    expect(states).toEqual([expect.objectContaining({ kind: 'key_quota', subject_id: account.keyId, state: 'notified', percent: 50, quota_usd: 4, threshold_usd: 2 })]);
  });

  it('validates thresholds and names the account it does not know', async () => {
    const account = await newAccount(gateway, 1);
    for (const body of [{ alert_quota_percent: 0 }, { alert_quota_percent: 101 }, { alert_quota_percent: 5.5 }, { alert_balance_usd: -1 }, { other: 1 }]) {
      const answer = await admin(gateway, 'PUT', `/admin/accounts/${account.id}/alerts`, body);
      expect(answer.status, answer.text).toBe(400);
    }
    expect((await admin(gateway, 'PUT', '/admin/accounts/acct_missing/alerts', { alert_quota_percent: 5 })).status).toBe(404);
    expect((await admin(gateway, 'GET', '/admin/accounts/acct_missing/alerts')).status).toBe(404);
    // PATCH /admin/accounts/:id sets the same balance threshold.
    expect((await admin(gateway, 'PATCH', `/admin/accounts/${account.id}`, { alert_balance_usd: 2.5 })).status).toBe(200);
    expect((await admin(gateway, 'GET', `/admin/accounts/${account.id}/alerts`)).body).toMatchObject({ alert_balance_usd: 2.5 });
    const unauthenticated = await fetch(`${gateway.url}/admin/accounts/${account.id}/alerts`);
    expect(unauthenticated.status).toBe(401);
  });
});

describe('alert mails without SMTP_URL', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ env: { ALERT_CHECK_SECONDS: '1' } });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  it('are written to the log: to whom and the subject, no body, no secrets', async () => {
    const account = await newAccount(gateway, 3);
    await setAlerts(gateway, account.id, { alert_balance_usd: 5 });
    const line = (): string | undefined => gateway.logs.find((entry) => entry.includes('mail not sent (SMTP_URL is not set)') && entry.includes(account.email));
    await waitUntil(() => line() !== undefined, 10_000, 'the mail log line');
    const entry = JSON.parse(line() ?? '{}') as Record<string, unknown>;
    expect(entry).toMatchObject({ level: 'info', to: account.email, subject: 'Balance alert: funds left $3.00, below $5.00' });
    expect(entry).not.toHaveProperty('text');
    await sleep(2200);
    expect(gateway.logs.filter((logged) => logged.includes('mail not sent') && logged.includes(account.email))).toHaveLength(1);
    const logs = gateway.logs.join('\n');
    expect(logs).not.toContain(account.key);
    expect(logs).not.toContain(gateway.adminToken);
    expect(logs).not.toContain('Top up to keep');
  });
});

describe('alert mails while the SMTP server is down', () => {
  const credentials = { user: 'alerts', pass: `pw-${randomBytes(8).toString('hex')}` };
  const smtp = new SmtpCapture();
  let gateway: TestGateway;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    gateway = await startTestGateway({ env: { SMTP_URL: `smtp://${credentials.user}:${credentials.pass}@127.0.0.1:${port}`, ALERT_CHECK_SECONDS: '1' } });
  });

  afterAll(async () => {
    await gateway?.close();
    await smtp.stop();
  });

  it('are logged as failed, retried later, and delivered exactly once when the server is back', async () => {
    const account = await newAccount(gateway, 1);
    await setAlerts(gateway, account.id, { alert_balance_usd: 2 });
    const failures = (): string[] => gateway.logs.filter((entry) => entry.includes('alert mail failed; will retry') && entry.includes(account.id));
    await waitUntil(() => failures().length >= 2, 10_000, 'two failed attempts');
    const states = await alertStates(gateway, account.id);
    expect(states[0]).toMatchObject({ kind: 'balance', state: 'pending' });
    expect((states[0] as unknown as { attempts: number }).attempts).toBeGreaterThanOrEqual(2);

    await smtp.start({ port, credentials });
    await waitUntil(() => smtp.to(account.email).length >= 1, 15_000, 'the mail after the server came back');
    await sleep(2500);
    expect(smtp.to(account.email)).toHaveLength(1);
    expect(smtp.to(account.email)[0]?.subject).toBe('Balance alert: funds left $1.00, below $2.00');
    expect((await alertStates(gateway, account.id))[0]).toMatchObject({ state: 'notified', last_error: null });
    expect(gateway.logs.join('\n')).not.toContain(credentials.pass);
  });
});
