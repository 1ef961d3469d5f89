/**
 * Two `unigate serve` processes on one database (SQLite file, or PostgreSQL with TEST_DATABASE_URL):
 * - many concurrent redemptions of one code, split across both, top up exactly once, and each account's ledger sum
 *   equals its balance;
 * - both run the alert checker against one SMTP server, and a crossing is mailed exactly once.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SmtpCapture } from '../../support/smtp-capture.js';
import { call } from '../admin/helpers.js';
import { killAll, waitUntil } from '../cli/cli-process.js';
import { ledgerEntries, nano, startServeCluster, type ServeCluster, type ServeInstance } from '../serve-cluster.js';

describe('two gateway processes on one database', () => {
  const smtp = new SmtpCapture();
  let cluster: ServeCluster;
  let a: ServeInstance;
  let b: ServeInstance;

  beforeAll(async () => {
    await smtp.start();
    cluster = await startServeCluster(2, [], { SMTP_URL: smtp.url(), ALERT_CHECK_SECONDS: '1' });
    [a, b] = cluster.instances as [ServeInstance, ServeInstance];
  }, 60_000);

  afterAll(async () => {
    killAll();
    await cluster?.close();
    await smtp.stop();
  });

  const admin = <T = Record<string, unknown>>(instance: ServeInstance, method: string, route: string, body?: unknown) =>
    cluster.admin<T>(method, route, body, cluster.instances.indexOf(instance));

  async function newAccount(balanceUsd: number): Promise<{ id: string; email: string; key: string }> {
    const email = `pair-${randomBytes(5).toString('hex')}@example.com`;
    const account = await admin<{ id: string }>(a, 'POST', '/admin/accounts', { email });
    expect(account.status, account.text).toBe(201);
    expect((await admin(b, 'POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: balanceUsd })).status).toBe(200);
    const key = await admin<{ key: string }>(a, 'POST', `/admin/accounts/${account.body.id}/keys`, {});
    expect(key.status, key.text).toBe(201);
    return { id: account.body.id, email, key: key.body.key };
  }

  async function ledgerSum(accountId: string): Promise<bigint> {
    return (await ledgerEntries(cluster, accountId)).reduce((total, entry) => total + nano(entry.amount_usd), 0n);
  }

  it('redeem one code exactly once between them; ledger sums equal balances', async () => {
    const accounts = await Promise.all([newAccount(1), newAccount(2)]);
    const created = await admin<{ data: Array<{ id: string; code: string }> }>(b, 'POST', '/admin/redemption-codes', { amount_usd: '4.000000001' });
    expect(created.status, created.text).toBe(201);
    const code = created.body.data[0];
    const answers = await Promise.all(Array.from({ length: 20 }, (_, index) => {
      const instance = index % 2 === 0 ? a : b;
      const account = accounts[Math.floor(index / 2) % 2] as { key: string };
      return call(instance.url, 'POST', '/v1/dashboard/billing/redeem', { token: account.key, body: { code: code?.code } });
    }));
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, ...Array(19).fill(409)]);
    const redeemed = await admin<{ redeemed_by: string }>(a, 'GET', `/admin/redemption-codes/${code?.id}`);
    // The instance that did not redeem may show a balance it read before, for up to the ledger's 2 s cache TTL.
    await new Promise((resolve) => setTimeout(resolve, 2100));
    for (const [index, account] of accounts.entries()) {
      const expected = BigInt(index + 1) * 1_000_000_000n + (account.id === redeemed.body.redeemed_by ? 4_000_000_001n : 0n);
      for (const instance of [a, b]) {
        const shown = await admin<{ balance_usd: number }>(instance, 'GET', `/admin/accounts/${account.id}`);
        expect(BigInt(Math.round(shown.body.balance_usd * 1e9)), `${account.id} on ${instance.url}: ${shown.text}`).toBe(expected);
      }
      expect(await ledgerSum(account.id)).toBe(expected);
    }
  });

  it('mail a balance crossing exactly once although both check for it', async () => {
    const account = await newAccount(3);
    expect((await admin(b, 'PUT', `/admin/accounts/${account.id}/alerts`, { alert_balance_usd: 5 })).status).toBe(200);
    await waitUntil(() => smtp.to(account.email).length >= 1, 10_000, 'the alert mail');
    // Several more checks on each instance.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    expect(smtp.to(account.email)).toHaveLength(1);
    expect(smtp.to(account.email)[0]?.subject).toBe('Balance alert: funds left $3.00, below $5.00');
  });
});
