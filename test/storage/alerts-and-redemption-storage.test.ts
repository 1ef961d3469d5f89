/**
 * Storage of alerts and redemption codes on SQLite and (with TEST_DATABASE_URL) PostgreSQL: redemption codes are redeemed exactly
 * once even when many redemptions race through two separate storage handles (two gateway instances on one database),
 * with the ledger sum equal to the balance; alert crossings are claimed once, leased once, and re-armed only when the
 * value is back on the good side of the threshold.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { quotaThresholdNano } from '../../src/alerts/quota-threshold.js';
import { issueRedemptionCode } from '../../src/redemption/redemption-code.js';
import { newId } from '../../src/shared/ids.js';
import { SecretBox } from '../../src/shared/secret-box.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { AlertCrossing } from '../../src/storage/repositories/alert-repository.js';
import type { RedemptionCode } from '../../src/storage/repositories/redemption-repository.js';
import type { Storage } from '../../src/storage/storage.js';
import { createThrowawayPostgresDatabase, isPostgresUrl, type ThrowawayPostgresDatabase } from '../support/postgres-test-database.js';
import { makeAccount, makeApiKey, makePlan, makeSubscription } from './fixtures.js';

const NOW = 1_800_000_000_000;
const USD = 1_000_000_000n;

function makeCode(overrides: Partial<RedemptionCode> = {}): { code: RedemptionCode; plaintext: string } {
  const issued = issueRedemptionCode('unigate');
  return {
    plaintext: issued.plaintext,
    code: {
      id: newId('rc', NOW), codeHash: issued.codeHash, hint: issued.hint, name: 'batch', amountNano: 5n * USD,
      expiresAt: null, disabledAt: null, redeemedBy: null, redeemedAt: null, ledgerEntryId: null, createdAt: NOW, updatedAt: NOW,
      ...overrides,
    },
  };
}

function describeExtras(name: string, openUrl: () => Promise<{ url: string; cleanup: () => Promise<void> }>): void {
  describe(name, () => {
    let a: Storage;
    let b: Storage;
    let cleanup: () => Promise<void> = async () => {};

    beforeAll(async () => {
      const opened = await openUrl();
      cleanup = opened.cleanup;
      const secretBox = new SecretBox(randomBytes(32));
      a = await openStorage({ url: opened.url, secretBox });
      b = await openStorage({ url: opened.url, secretBox });
    });

    afterAll(async () => {
      await a?.close();
      await b?.close();
      await cleanup();
    });

    async function account(balanceNano = 0n): Promise<string> {
      const created = makeAccount();
      await a.accounts.create(created);
      if (balanceNano !== 0n) {
        await a.ledger.applyCredit({ entryId: newId('led'), accountId: created.id, kind: 'topup', amountNano: balanceNano, reason: null, createdAt: NOW });
      }
      return created.id;
    }

    async function expectLedgerMatches(accountId: string): Promise<bigint> {
      const balance = (await a.accounts.getById(accountId))?.balanceNano;
      expect(await a.ledger.sumByAccount(accountId)).toBe(balance);
      return balance ?? 0n;
    }

    describe('redemption codes', () => {
      it('redeems once: one topup entry naming the code id, balance up by the amount, then refuses reuse', async () => {
        const accountId = await account(USD);
        const { code } = makeCode();
        await a.redemptionCodes.createMany([code]);
        const ledgerEntryId = newId('led', NOW);
        const first = await a.redemptionCodes.redeem({ codeHash: code.codeHash, accountId, ledgerEntryId, now: NOW + 1 });
        expect(first).toMatchObject({ ok: true, balanceNano: 6n * USD });
        if (!first.ok) throw new Error('unreachable');
        expect(first.code).toMatchObject({ id: code.id, redeemedBy: accountId, redeemedAt: NOW + 1, ledgerEntryId });

        const again = await b.redemptionCodes.redeem({ codeHash: code.codeHash, accountId, ledgerEntryId: newId('led', NOW), now: NOW + 2 });
        expect(again).toMatchObject({ ok: false, reason: 'redeemed' });
        expect(await expectLedgerMatches(accountId)).toBe(6n * USD);
        const entries = await a.ledger.listByAccount(accountId, { limit: 10 });
        const topup = entries.data.find((entry) => entry.id === ledgerEntryId);
        expect(topup).toMatchObject({ kind: 'topup', amountNano: 5n * USD, reason: `redemption code ${code.id}` });
      });

      it('tells unknown, expired and disabled codes and unknown accounts apart, moving no money', async () => {
        const accountId = await account();
        const expired = makeCode({ expiresAt: NOW });
        const disabled = makeCode({ disabledAt: NOW - 1 });
        await a.redemptionCodes.createMany([expired.code, disabled.code]);
        const attempt = (codeHash: string, who = accountId) => a.redemptionCodes.redeem({ codeHash, accountId: who, ledgerEntryId: newId('led'), now: NOW });
        expect(await attempt('0'.repeat(64))).toEqual({ ok: false, reason: 'not_found' });
        expect(await attempt(expired.code.codeHash)).toMatchObject({ ok: false, reason: 'expired' });
        expect(await attempt(disabled.code.codeHash)).toMatchObject({ ok: false, reason: 'disabled' });
        expect(await attempt(makeCode().code.codeHash, 'acct_missing')).toEqual({ ok: false, reason: 'no_account' });
        expect(await expectLedgerMatches(accountId)).toBe(0n);
      });

      it('lets exactly one of many racing redemptions (two accounts; two storage handles on PostgreSQL) win', async () => {
        const first = await account(USD);
        const second = await account(2n * USD);
        const { code } = makeCode({ amountNano: 7n * USD });
        await a.redemptionCodes.createMany([code]);
        // node:sqlite is synchronous: a second handle in the same process would wait on the first one's write lock
        // while blocking the thread that holds it. Two processes on one SQLite file are raced in test/e2e/redemption/.
        const other = a.dialect === 'sqlite' ? a : b;
        const attempts = Array.from({ length: 24 }, (_, index) => (index % 2 === 0 ? a : other).redemptionCodes.redeem({
          codeHash: code.codeHash, accountId: index % 3 === 0 ? first : second, ledgerEntryId: newId('led'), now: NOW,
        }));
        const outcomes = await Promise.all(attempts);
        const winners = outcomes.filter((outcome) => outcome.ok);
        expect(winners).toHaveLength(1);
        expect(outcomes.filter((outcome) => !outcome.ok && outcome.reason === 'redeemed')).toHaveLength(23);
        const balances: [bigint, bigint] = [await expectLedgerMatches(first), await expectLedgerMatches(second)];
        expect(balances[0] + balances[1]).toBe(3n * USD + 7n * USD);
        const stored = await a.redemptionCodes.getById(code.id);
        expect(stored?.redeemedBy === first ? balances[0] : balances[1]).toBe((stored?.redeemedBy === first ? USD : 2n * USD) + 7n * USD);
      });

      it('keeps a redeemed code as it is, pages and filters by state', async () => {
        const accountId = await account();
        const batch = [makeCode(), makeCode(), makeCode({ expiresAt: NOW - 5 })].map((made) => made.code);
        await a.redemptionCodes.createMany(batch);
        const [redeemed, active, expired] = batch as [RedemptionCode, RedemptionCode, RedemptionCode];
        expect((await a.redemptionCodes.redeem({ codeHash: redeemed.codeHash, accountId, ledgerEntryId: newId('led'), now: NOW })).ok).toBe(true);
        expect(await a.redemptionCodes.update(redeemed.id, { disabledAt: NOW }, NOW)).toMatchObject({ outcome: 'redeemed' });
        expect(await a.redemptionCodes.update(redeemed.id, { name: 'renamed' }, NOW)).toMatchObject({ outcome: 'updated', code: { name: 'renamed' } });
        expect(await a.redemptionCodes.update('rc_missing', { name: 'x' }, NOW)).toEqual({ outcome: 'not_found' });

        const byAccount = await a.redemptionCodes.list({ redeemedBy: accountId }, { limit: 10 }, NOW);
        expect(byAccount.data.map((code) => code.id)).toEqual([redeemed.id]);
        const ids = new Set(batch.map((code) => code.id));
        const collect = async (state: 'active' | 'expired' | 'redeemed' | 'disabled') => {
          const found: string[] = [];
          let after: string | null = null;
          for (let page = 0; page < 100; page += 1) {
            const result = await a.redemptionCodes.list({ state }, { limit: 50, after }, NOW);
            found.push(...result.data.map((code) => code.id).filter((id) => ids.has(id)));
            if (result.nextCursor === null) return found;
            after = result.nextCursor;
          }
          throw new Error('too many pages');
        };
        expect(await collect('active')).toEqual([active.id]);
        expect(await collect('expired')).toEqual([expired.id]);
        expect(await collect('redeemed')).toEqual([redeemed.id]);
        expect(await a.redemptionCodes.update(active.id, { disabledAt: NOW }, NOW)).toMatchObject({ outcome: 'updated' });
        expect(await collect('disabled')).toEqual([active.id]);
      });
    });

    describe('alerts', () => {
      async function crossingsOf(subjectId: string, storage: Storage = a, now = NOW): Promise<AlertCrossing[]> {
        return (await storage.alerts.findCrossings(now, 10_000)).filter((crossing) => crossing.subjectId === subjectId);
      }

      it('keeps the thresholds of an account', async () => {
        const accountId = await account();
        expect(await a.alerts.getSettings(accountId)).toEqual({ balanceNano: null, quotaPercent: null });
        expect(await a.alerts.setSettings(accountId, { balanceNano: 3n * USD, quotaPercent: 80 }, NOW)).toEqual({ balanceNano: 3n * USD, quotaPercent: 80 });
        expect(await a.alerts.setSettings(accountId, { quotaPercent: null }, NOW)).toEqual({ balanceNano: 3n * USD, quotaPercent: null });
        expect(await a.alerts.getSettings('acct_missing')).toBeNull();
        expect(await a.alerts.setSettings('acct_missing', { quotaPercent: 5 }, NOW)).toBeNull();
      });

      it('balance: one claim per crossing across two handles, one lease, re-armed by a top-up', async () => {
        const accountId = await account(10n * USD);
        await a.alerts.setSettings(accountId, { balanceNano: 5n * USD }, NOW);
        expect(await crossingsOf(accountId)).toEqual([]);
        await a.ledger.applyCredit({ entryId: newId('led'), accountId, kind: 'correction', amountNano: -6n * USD, reason: null, createdAt: NOW });

        const [crossing] = await crossingsOf(accountId, b);
        expect(crossing).toEqual({
          kind: 'balance', subjectId: accountId, accountId, periodStart: 0, valueNano: 4n * USD, thresholdNano: 5n * USD, limitNano: null, percent: null,
        });
        if (crossing === undefined) throw new Error('unreachable');
        const claims = await Promise.all(Array.from({ length: 10 }, (_, index) => (index % 2 === 0 ? a : b).alerts.claim(crossing, NOW)));
        expect(claims.filter(Boolean)).toHaveLength(1);
        expect(await crossingsOf(accountId)).toEqual([]);

        const due = (await a.alerts.listDue(NOW, 10_000)).filter((alert) => alert.subjectId === accountId);
        expect(due).toHaveLength(1);
        const alert = due[0];
        if (alert === undefined) throw new Error('unreachable');
        expect(alert).toMatchObject({ state: 'pending', attempts: 0 });
        const leases = await Promise.all([a.alerts.lease(alert, NOW + 60_000, NOW), b.alerts.lease(alert, NOW + 60_000, NOW)]);
        expect(leases.filter(Boolean)).toHaveLength(1);
        expect((await a.alerts.listDue(NOW + 1, 10_000)).some((entry) => entry.subjectId === accountId)).toBe(false);

        // A failed attempt comes back when its retry time is reached, and only then.
        await a.alerts.markFailed(alert, 1, NOW + 5000, 'ECONNREFUSED', NOW);
        expect((await a.alerts.listDue(NOW + 4999, 10_000)).some((entry) => entry.subjectId === accountId)).toBe(false);
        const retry = (await a.alerts.listDue(NOW + 5000, 10_000)).find((entry) => entry.subjectId === accountId);
        expect(retry).toMatchObject({ attempts: 1, lastError: 'ECONNREFUSED' });
        if (retry === undefined) throw new Error('unreachable');
        expect(await a.alerts.lease(retry, NOW + 65_000, NOW + 5000)).toBe(true);
        await a.alerts.markNotified(retry, 2, NOW + 5001);
        expect((await a.alerts.listByAccount(accountId))[0]).toMatchObject({ state: 'notified', notifiedAt: NOW + 5001, attempts: 2, lastError: null });

        // Still below: nothing re-arms, nothing is claimable.
        expect(await a.alerts.rearm(NOW)).toBeGreaterThanOrEqual(0);
        expect((await a.alerts.listByAccount(accountId))[0]?.state).toBe('notified');
        expect(await crossingsOf(accountId)).toEqual([]);
        // A top-up over the threshold re-arms; the next drop is a new crossing.
        await a.ledger.applyCredit({ entryId: newId('led'), accountId, kind: 'topup', amountNano: 2n * USD, reason: null, createdAt: NOW });
        await a.alerts.rearm(NOW);
        expect((await a.alerts.listByAccount(accountId))[0]?.state).toBe('armed');
        expect(await crossingsOf(accountId)).toEqual([]);
        await a.ledger.applyCredit({ entryId: newId('led'), accountId, kind: 'correction', amountNano: -3n * USD, reason: null, createdAt: NOW });
        const [next] = await crossingsOf(accountId);
        expect(next?.valueNano).toBe(3n * USD);
        if (next === undefined) throw new Error('unreachable');
        expect(await b.alerts.claim(next, NOW + 10)).toBe(true);
        expect((await a.alerts.listByAccount(accountId))[0]).toMatchObject({ state: 'pending', attempts: 0, valueNano: 3n * USD, crossedAt: NOW + 10 });
      });

      it('balance: the credit line counts as funds left', async () => {
        const accountId = await account(USD);
        await a.alerts.setSettings(accountId, { balanceNano: 5n * USD }, NOW);
        expect(await crossingsOf(accountId)).toHaveLength(1);
        await a.accounts.update(accountId, { creditLineNano: 10n * USD }, NOW);
        expect(await crossingsOf(accountId)).toEqual([]);
      });

      it('key quota: fires at exactly the percent of the quota, not before; re-armed when the quota is raised', async () => {
        const accountId = await account(100n * USD);
        const quota = 10n * USD + 7n;
        const key = makeApiKey(accountId, { quotaNano: quota });
        await a.keys.create(key);
        await a.alerts.setSettings(accountId, { quotaPercent: 80 }, NOW);
        const threshold = quotaThresholdNano(quota, 80);
        const spend = (nano: bigint) => a.ledger.settleCharges([{ entryId: newId('led'), accountId, keyId: key.id, requestId: newId('req'), costNano: nano, createdAt: NOW }]);
        await spend(threshold - 1n);
        expect(await crossingsOf(key.id)).toEqual([]);
        await spend(1n);
        const [crossing] = await crossingsOf(key.id);
        expect(crossing).toEqual({ kind: 'key_quota', subjectId: key.id, accountId, periodStart: 0, valueNano: threshold, thresholdNano: threshold, limitNano: quota, percent: 80 });
        if (crossing === undefined) throw new Error('unreachable');
        expect(await a.alerts.claim(crossing, NOW)).toBe(true);
        expect(await b.alerts.claim(crossing, NOW)).toBe(false);
        const [alert] = (await a.alerts.listDue(NOW, 10_000)).filter((entry) => entry.subjectId === key.id);
        if (alert === undefined) throw new Error('unreachable');
        expect(await a.alerts.lease(alert, NOW + 1000, NOW)).toBe(true);
        await a.alerts.markNotified(alert, 1, NOW);
        await a.keys.update(key.id, { quotaNano: 20n * USD }, NOW);
        await a.alerts.rearm(NOW);
        expect((await a.alerts.listByAccount(accountId)).find((entry) => entry.subjectId === key.id)?.state).toBe('armed');
      });

      it('subscription quota: only the live period counts; a new period is a new crossing', async () => {
        const accountId = await account();
        const plan = makePlan({ quotaNano: 100n * USD });
        await a.plans.create(plan);
        await a.alerts.setSettings(accountId, { quotaPercent: 50 }, NOW);
        const live = makeSubscription(accountId, plan.id, { currentPeriodStart: NOW - 1000, currentPeriodEnd: NOW + 86_400_000, usedNano: 60n * USD });
        const stale = makeSubscription(accountId, plan.id, { currentPeriodStart: NOW - 2000, currentPeriodEnd: NOW - 1000, usedNano: 90n * USD });
        const under = makeSubscription(accountId, plan.id, { currentPeriodStart: NOW - 1000, currentPeriodEnd: NOW + 86_400_000, usedNano: 50n * USD - 1n });
        for (const subscription of [live, stale, under]) await a.subscriptions.create(subscription);
        expect(await crossingsOf(stale.id)).toEqual([]);
        expect(await crossingsOf(under.id)).toEqual([]);
        const [crossing] = await crossingsOf(live.id);
        expect(crossing).toMatchObject({ kind: 'subscription_quota', periodStart: NOW - 1000, valueNano: 60n * USD, thresholdNano: 50n * USD, limitNano: 100n * USD, percent: 50 });
        if (crossing === undefined) throw new Error('unreachable');
        expect(await a.alerts.claim(crossing, NOW)).toBe(true);
        const [alert] = (await a.alerts.listDue(NOW, 10_000)).filter((entry) => entry.subjectId === live.id);
        if (alert === undefined) throw new Error('unreachable');
        expect(await a.alerts.lease(alert, NOW + 1000, NOW)).toBe(true);
        await a.alerts.markNotified(alert, 1, NOW);
        expect(await a.alerts.claim(crossing, NOW)).toBe(false);
        // The next period's crossing is claimable although the row was never re-armed.
        expect(await a.alerts.claim({ ...crossing, periodStart: NOW + 86_400_000 }, NOW + 86_400_000)).toBe(true);
      });
    });
  });
}

const directories: string[] = [];
afterAll(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

describeExtras('SQLite: alerts and redemption codes', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-extras-'));
  directories.push(directory);
  return { url: `sqlite:${join(directory, 'gateway.db')}`, cleanup: async () => {} };
});

const adminUrl = process.env.TEST_DATABASE_URL;
if (isPostgresUrl(adminUrl)) {
  describeExtras('PostgreSQL: alerts and redemption codes', async () => {
    const database: ThrowawayPostgresDatabase = await createThrowawayPostgresDatabase(adminUrl);
    return { url: database.url, cleanup: () => database.drop() };
  });
}
