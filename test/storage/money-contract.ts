import { describe, expect, it } from 'vitest';
import { newId } from '../../src/shared/ids.js';
import type { SettledUsage, Storage } from '../../src/storage/storage.js';
import { makeAccount, makeApiKey, makePlan, makeSubscription } from './fixtures.js';

/** Money: holds per instance and pool, settlement split between wallet and subscription, heartbeats, the audit. */
export function describeMoneyContract(storageOf: () => Storage): void {
  async function seed(balanceNano: bigint) {
    const storage = storageOf();
    const account = makeAccount({ balanceNano: 0n });
    await storage.accounts.create(account);
    if (balanceNano !== 0n) {
      await storage.ledger.applyCredit({ entryId: newId('led'), accountId: account.id, kind: 'topup', amountNano: balanceNano, reason: null, createdAt: 1 });
    }
    const key = makeApiKey(account.id, { quotaNano: 1_000n, spentNano: 0n });
    await storage.keys.create(key);
    const plan = makePlan({ quotaNano: 500n, overagePolicy: 'limit', overageLimitNano: 100n, period: 'day' });
    await storage.plans.create(plan);
    const subscription = makeSubscription(account.id, plan.id, { usedNano: 0n, currentPeriodStart: 1_000, currentPeriodEnd: 86_401_000, startsAt: 1_000 });
    await storage.subscriptions.create(subscription);
    return { account, key, plan, subscription };
  }

  function usage(accountId: string, keyId: string, subscriptionId: string, parts: Partial<SettledUsage>): SettledUsage {
    return {
      entryId: newId('led'), accountId, keyId, requestId: newId('req'), walletNano: 0n, shortfallNano: 0n, subscriptionId,
      periodStart: 1_000, subscriptionNano: 0n, overageNano: 0n, createdAt: 5, ...parts,
    };
  }

  describe('money', () => {
    it('keeps a holder\'s hold apart from instances: taken off only with a new entry, released once, never swept as a stale instance', async () => {
      const storage = storageOf();
      const { account, key } = await seed(10_000n);
      const wallet = `wallet:${account.id}`;
      await storage.money.transact([account.id], (transaction) => transaction.write('instance-a', {
        rollovers: [], usages: [], holds: [], now: 5, holderGrants: [{ holder: 'batch:b1', pool: wallet, accountId: account.id, heldNano: 900n }],
      }));
      const charge = usage(account.id, key.id, '', { subscriptionId: null, walletNano: 300n });
      const take = { entryId: charge.entryId, holder: 'batch:b1', pool: wallet, takenNano: 300n };
      const snapshot = await storage.money.transact([account.id], async (transaction) => {
        const read = await transaction.read({ accountIds: [account.id], keyIds: [], subscriptionIds: [], pools: [wallet], holders: ['batch:b1'] });
        await transaction.write('instance-a', { rollovers: [], usages: [charge], holds: [], now: 6, holderTakes: [take] });
        return read;
      });
      expect(snapshot.heldByPool.get(wallet)).toBe(900n);
      expect(snapshot.holderHolds?.get('batch:b1')).toEqual(new Map([[wallet, 900n]]));
      // The same settlement replayed takes nothing more off the hold.
      await storage.money.transact([account.id], (transaction) => transaction.write('instance-a', { rollovers: [], usages: [charge], holds: [], now: 7, holderTakes: [take] }));
      expect(await storage.money.listHolds(account.id)).toEqual([{ instanceId: 'batch:b1', pool: wallet, accountId: account.id, heldNano: 600n }]);
      expect(await storage.money.listHolders()).toEqual([{ holder: 'batch:b1', accountId: account.id, updatedAt: 6 }]);
      // No heartbeat row, yet not a stale instance.
      expect(await storage.money.staleInstances(1_000_000)).not.toContain('batch:b1');
      expect(await storage.money.transact([account.id], (transaction) => transaction.dropHolder('batch:b1'))).toBe(600n);
      expect(await storage.money.transact([account.id], (transaction) => transaction.dropHolder('batch:b1'))).toBe(0n);
      expect(await storage.money.listHolders()).toEqual([]);
      expect((await storage.accounts.getById(account.id))?.balanceNano).toBe(10_000n - 300n);
    });

    it('reads pools, settles wallet and subscription parts once, writes absolute holds, and the audit balances', async () => {
      const storage = storageOf();
      const { account, key, subscription } = await seed(10_000n);
      const paid = [
        usage(account.id, key.id, subscription.id, { subscriptionNano: 300n }),
        usage(account.id, key.id, subscription.id, { subscriptionNano: 200n, walletNano: 50n, overageNano: 50n }),
        usage(account.id, key.id, subscription.id, { subscriptionId: null, walletNano: 7n, shortfallNano: 3n }),
      ];
      const fresh = await storage.money.transact([account.id], async (transaction) => {
        const snapshot = await transaction.read({ accountIds: [account.id], keyIds: [key.id], subscriptionIds: [subscription.id], pools: [`wallet:${account.id}`] });
        expect(snapshot.accounts.get(account.id)).toEqual({ balanceNano: 10_000n, creditLineNano: 0n });
        expect(snapshot.keys.get(key.id)).toEqual({ accountId: account.id, quotaNano: 1_000n, spentNano: 0n, budget: null });
        expect(snapshot.subscriptions.get(subscription.id)?.plan.quotaNano).toBe(500n);
        expect(snapshot.heldByPool.size).toBe(0);
        return transaction.write('instance-a', { rollovers: [], usages: paid, holds: [{ pool: `wallet:${account.id}`, accountId: account.id, heldNano: 400n }], now: 9 });
      });
      expect(fresh.size).toBe(3);
      // Replayed (an unacknowledged commit retried): nothing moves twice.
      const replay = await storage.money.transact([account.id], (transaction) => transaction.write('instance-a', { rollovers: [], usages: paid, holds: [], now: 10 }));
      expect(replay.size).toBe(0);

      expect((await storage.accounts.getById(account.id))?.balanceNano).toBe(10_000n - 57n);
      expect((await storage.keys.getById(key.id))?.spentNano).toBe(557n);
      expect(await storage.subscriptions.getById(subscription.id)).toMatchObject({ usedNano: 500n, overageUsedNano: 50n });
      const entries = (await storage.ledger.listByAccount(account.id, { limit: 10 })).data.filter((entry) => entry.kind === 'usage');
      expect(entries.map((entry) => [entry.amountNano, entry.shortfallNano]).sort()).toEqual([[-50n, 0n], [-7n, 3n]].sort());
      expect(await storage.money.listHolds(account.id)).toEqual([{ instanceId: 'instance-a', pool: `wallet:${account.id}`, accountId: account.id, heldNano: 400n }]);

      const audit = await storage.money.audit(account.id);
      expect(audit.accounts).toEqual([{ id: account.id, balanceNano: 9_943n, creditLineNano: 0n, ledgerSumNano: 9_943n, heldNano: 400n, reversedNano: 0n }]);
      expect(audit.keys).toEqual([{ id: key.id, accountId: account.id, spentNano: 557n, usageSumNano: 557n }]);
      expect(audit.subscriptions).toEqual([{ id: subscription.id, accountId: account.id, usedNano: 500n, overageUsedNano: 50n, usageSumNano: 500n, overageSumNano: 50n }]);
      expect(audit.duplicateCharges).toEqual([]);
      expect(await storage.money.creditTotals(account.id)).toEqual({ creditedNano: 10_000n, debitedNano: 57n });

      // A rollover starts the period from zero; a hold written as 0 is deleted.
      await storage.money.transact([account.id], (transaction) => transaction.write('instance-a', {
        rollovers: [{ id: subscription.id, status: 'active', currentPeriodStart: 86_401_000, currentPeriodEnd: 172_801_000, resetUsage: true }],
        usages: [],
        holds: [{ pool: `wallet:${account.id}`, accountId: account.id, heldNano: 0n }],
        now: 11,
      }));
      expect(await storage.subscriptions.getById(subscription.id)).toMatchObject({ usedNano: 0n, overageUsedNano: 0n, currentPeriodStart: 86_401_000 });
      expect(await storage.money.listHolds(account.id)).toEqual([]);
      expect((await storage.money.audit(account.id)).subscriptions[0]).toMatchObject({ usedNano: 0n, usageSumNano: 0n });

      // The audit sees a balance moved behind the ledger's back.
      await storage.accounts.update(account.id, { creditLineNano: 5n }, 12);
      expect((await storage.money.audit(account.id)).accounts[0]?.creditLineNano).toBe(5n);
    });

    it('sums holds of every instance per pool; a restart drops its own; stale instances are released', async () => {
      const storage = storageOf();
      const { account } = await seed(1_000n);
      const pool = `wallet:${account.id}`;
      const first = `first-${newId('i')}`;
      const second = `second-${newId('i')}`;
      expect(await storage.money.registerInstance(first, 100)).toBe(0);
      await storage.money.registerInstance(second, 100);
      for (const [instance, held] of [[first, 300n], [second, 200n]] as const) {
        await storage.money.transact([account.id], (transaction) => transaction.write(instance, { rollovers: [], usages: [], holds: [{ pool, accountId: account.id, heldNano: held }], now: 100 }));
      }
      const sum = await storage.money.transact([account.id], (transaction) => transaction.read({ accountIds: [], keyIds: [], subscriptionIds: [], pools: [pool] }));
      expect(sum.heldByPool.get(pool)).toBe(500n);

      expect(await storage.money.registerInstance(first, 200)).toBe(1);
      expect((await storage.money.listHolds(account.id)).map((hold) => hold.instanceId)).toEqual([second]);
      await storage.money.heartbeat(first, 10_000);
      const stale = await storage.money.staleInstances(5_000);
      expect(stale).toContain(second);
      expect(stale).not.toContain(first);
      // A recovery drops the instance only while it is still gone: a fresh heartbeat keeps it.
      expect(await storage.money.transact([], (transaction) => transaction.instanceGone(first, 5_000))).toBe(false);
      expect(await storage.money.transact([], async (transaction) => {
        const gone = await transaction.instanceGone(second, 5_000);
        if (gone) await transaction.dropInstance(second);
        return gone;
      })).toBe(true);
      expect(await storage.money.listHolds(account.id)).toEqual([]);
      expect(await storage.money.staleInstances(5_000)).not.toContain(second);
      await storage.money.releaseInstance(first);
    });

    it('keeps stream checkpoints per instance: upserted, claimed once, deleted by their settlement', async () => {
      const storage = storageOf();
      const { account } = await seed(1_000n);
      const instance = `cp-${newId('i')}`;
      const checkpoint = (requestId: string, costNano: bigint) => ({ requestId, accountId: account.id, costNano, reservation: '{"r":1}', usageRow: `{"cost":"${costNano}"}` });
      const [kept, settled] = [newId('req'), newId('req')];
      await storage.money.writeCheckpoints(instance, [checkpoint(kept, 5n), checkpoint(settled, 7n)], 10);
      await storage.money.writeCheckpoints(instance, [checkpoint(kept, 9n)], 20);
      expect(await storage.money.checkpointAccounts(instance)).toEqual([account.id]);
      // Without a heartbeat row the instance's checkpoints make it stale.
      expect(await storage.money.staleInstances(0)).toContain(instance);
      await storage.money.transact([account.id], (transaction) => transaction.write(instance, { rollovers: [], usages: [], holds: [], checkpointsDone: [settled], now: 30 }));
      const claimed = await storage.money.transact([account.id], (transaction) => transaction.claimCheckpoints(instance, [account.id]));
      expect(claimed).toEqual([checkpoint(kept, 9n)]);
      expect(await storage.money.transact([account.id], (transaction) => transaction.claimCheckpoints(instance, [account.id]))).toEqual([]);
      expect(await storage.money.checkpointAccounts(instance)).toEqual([]);
      expect(await storage.money.staleInstances(0)).not.toContain(instance);
    });

    it('serialises transactions on one account: concurrent conditional holds never exceed the funds', async () => {
      const storage = storageOf();
      const { account } = await seed(100n);
      const pool = `wallet:${account.id}`;
      const attempts = Array.from({ length: 12 }, (_, index) => storage.money.transact([account.id], async (transaction) => {
        const snapshot = await transaction.read({ accountIds: [account.id], keyIds: [], subscriptionIds: [], pools: [pool] });
        const free = (snapshot.accounts.get(account.id)?.balanceNano ?? 0n) - (snapshot.heldByPool.get(pool) ?? 0n);
        if (free < 30n) return false;
        await transaction.write(`racer-${index}`, { rollovers: [], usages: [], holds: [{ pool, accountId: account.id, heldNano: 30n }], now: 1 });
        return true;
      }));
      const granted = (await Promise.all(attempts)).filter(Boolean).length;
      expect(granted).toBe(3);
      const holds = await storage.money.listHolds(account.id);
      expect(holds.reduce((total, hold) => total + hold.heldNano, 0n)).toBe(90n);
      for (let index = 0; index < 12; index += 1) await storage.money.releaseInstance(`racer-${index}`);
    });

    it('changes a subscription inside a money transaction', async () => {
      const storage = storageOf();
      const { account, subscription } = await seed(0n);
      const other = makePlan({ quotaNano: 9n });
      await storage.plans.create(other);
      const updated = await storage.money.transact([account.id], (transaction) => transaction.updateSubscription(subscription.id, { planId: other.id, cancelAt: 77 }, 50));
      expect(updated).toMatchObject({ planId: other.id, cancelAt: 77, updatedAt: 50 });
      expect(await storage.subscriptions.update('sub_missing', { status: 'cancelled' }, 1)).toBeNull();
    });
  });
}
