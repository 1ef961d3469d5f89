/**
 * PostgreSQL batch writes with one array parameter per column (usage rows, ledger entries, subscription usage,
 * holds, the money updates): the statement text does not depend on the row count, and values arrive exactly —
 * NULLs, money above 2^53, text that array literals must escape — with duplicate ids skipped.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/shared/ids.js';
import { SecretBox } from '../../src/shared/secret-box.js';
import { openStorage } from '../../src/storage/open-storage.js';
import { integerArray, textArray, unnestInsert } from '../../src/storage/postgres-arrays.js';
import type { SettledUsage, Storage } from '../../src/storage/storage.js';
import type { UsageLogRow } from '../../src/domain/usage-records.js';
import { createThrowawayPostgresDatabase, isPostgresUrl, type ThrowawayPostgresDatabase } from '../support/postgres-test-database.js';
import { HUGE_NANO, makeAccount, makeApiKey, makePlan, makeSubscription, makeUsageLog } from './fixtures.js';

const adminUrl = process.env.TEST_DATABASE_URL;

/** Text an array literal has to quote or escape, and text that looks like the literal's own NULL. */
const AWKWARD_TEXTS = ['NULL', 'null', '', ' padded ', 'a,b', '{braces}', 'say "hi"', 'back\\slash', 'tab\tnew\nline', 'ünïcødé ✓', "it's"];

describe('unnestInsert', () => {
  const insert = unnestInsert<{ id: string; amount: bigint; note: string | null }>('t', { id: 'text', amount: 'int8', note: 'text' }, 'on conflict ("id") do nothing');

  it('sends the same text for one row and for 500, one array parameter per column', () => {
    const one = insert([{ id: 'a', amount: 1n, note: null }]);
    const many = insert(Array.from({ length: 500 }, (_, index) => ({ id: `r${index}`, amount: BigInt(index), note: 'x' })));
    expect(one.sql).toBe('insert into "t" ("id", "amount", "note") select * from unnest($1::text[], $2::int8[], $3::text[]) on conflict ("id") do nothing');
    expect(many.sql).toBe(one.sql);
    expect(one.parameters).toEqual(['{"a"}', '{1}', '{NULL}']);
    expect(many.parameters).toHaveLength(3);
    expect(many.parameters[0]).toMatch(/,"r499"}$/);
  });
});

describe('array literals', () => {
  it('writes integers with all their digits and NULLs, and refuses anything that is not an integer', () => {
    expect(integerArray([HUGE_NANO, -HUGE_NANO, 0, null, undefined, 2_147_483_647])).toBe(`{${HUGE_NANO},-${HUGE_NANO},0,NULL,NULL,2147483647}`);
    expect(integerArray([])).toBe('{}');
    for (const bad of ['1,2', 1.5, Number.NaN, 2 ** 53, true]) expect(() => integerArray([bad])).toThrow(TypeError);
  });

  it('quotes every text, escapes quotes and backslashes, and refuses anything that is not text', () => {
    expect(textArray(['NULL', null, 'a,b', '{x}', 'say "hi"', 'back\\slash', ''])).toBe('{"NULL",NULL,"a,b","{x}","say \\"hi\\"","back\\\\slash",""}');
    for (const bad of [1, 1n, {}]) expect(() => textArray([bad])).toThrow(TypeError);
  });
});

describe.skipIf(!isPostgresUrl(adminUrl))('PostgreSQL array batch writes', () => {
  let database: ThrowawayPostgresDatabase | undefined;
  let storage: Storage;

  beforeAll(async () => {
    database = await createThrowawayPostgresDatabase(adminUrl);
    storage = await openStorage({ url: database.url, secretBox: new SecretBox(randomBytes(32)) });
  });

  afterAll(async () => {
    await storage?.close();
    await database?.drop();
  });

  async function usageOf(accountId: string): Promise<UsageLogRow[]> {
    return (await storage.usage.query({ accountId }, { limit: 1_000 })).data;
  }

  describe('usage rows', () => {
    it('writes a batch of one with every nullable column NULL and money above 2^53 exactly', async () => {
      const accountId = newId('acct');
      const row = makeUsageLog({ accountId, keyId: null, model: null, channelId: null, errorCode: null, ttfbMs: null, costNano: HUGE_NANO });
      delete row.attemptedChannels;
      await storage.usage.insertBatch([row]);
      expect(await usageOf(accountId)).toEqual([row]);
    });

    it('writes 500 rows with awkward text exactly and skips ids already stored or repeated in the batch', async () => {
      const accountId = newId('acct');
      const rows = Array.from({ length: 500 }, (_, index) => makeUsageLog({
        accountId,
        keyId: index % 2 === 0 ? null : `key_${index % 7}`,
        model: AWKWARD_TEXTS[index % AWKWARD_TEXTS.length] ?? null,
        errorCode: index % 3 === 0 ? AWKWARD_TEXTS[(index + 1) % AWKWARD_TEXTS.length] ?? null : null,
        endpoint: AWKWARD_TEXTS[(index + 2) % AWKWARD_TEXTS.length],
        stream: index % 2 === 1,
        cacheHit: index % 5 === 0,
        ttfbMs: index % 4 === 0 ? null : index,
        attemptedChannels: index % 6 === 0 ? ['chan_a', 'chan_b'] : undefined,
        costNano: index === 7 ? HUGE_NANO : BigInt(index) * 1_000_000_007n,
        createdAt: 1_750_000_000_000 + index,
      }));
      for (const row of rows) if (row.attemptedChannels === undefined) delete row.attemptedChannels;
      const [stored] = rows;
      await storage.usage.insertBatch([stored as UsageLogRow]);
      const repeated = { ...(rows[10] as UsageLogRow), costNano: 1n };
      await storage.usage.insertBatch([{ ...(stored as UsageLogRow), costNano: 2n }, ...rows.slice(1), repeated]);

      const byId = new Map((await usageOf(accountId)).map((row) => [row.requestId, row]));
      expect(byId.size).toBe(500);
      for (const row of rows) expect(byId.get(row.requestId)).toEqual(row);
    });
  });

  describe('money batches', () => {
    const instance = `pg-arrays-${newId('i')}`;

    function usage(accountId: string, keyId: string, parts: Partial<SettledUsage>): SettledUsage {
      return {
        entryId: newId('led'), accountId, keyId, requestId: newId('req'), walletNano: 0n, shortfallNano: 0n, subscriptionId: null,
        periodStart: null, subscriptionNano: 0n, overageNano: 0n, createdAt: 5, ...parts,
      };
    }

    it('settles 500 usages over many accounts, keys and subscriptions exactly, each entry once', async () => {
      const accounts = Array.from({ length: 25 }, (_, index) => makeAccount({ balanceNano: index === 0 ? HUGE_NANO : 10_000_000n }));
      const keys = accounts.map((account) => makeApiKey(account.id));
      const plan = makePlan({ quotaNano: HUGE_NANO, overagePolicy: 'payg', period: 'day' });
      await storage.plans.create(plan);
      const subscriptions = accounts.map((account) => makeSubscription(account.id, plan.id, { currentPeriodStart: 1_000, currentPeriodEnd: 86_401_000, startsAt: 1_000 }));
      for (const [index, account] of accounts.entries()) {
        await storage.accounts.create(account);
        await storage.keys.create(keys[index]!);
        await storage.subscriptions.create(subscriptions[index]!);
      }
      const usages = Array.from({ length: 500 }, (_, index) => {
        const at = index % accounts.length;
        const [accountId, keyId, subscriptionId] = [accounts[at]!.id, keys[at]!.id, subscriptions[at]!.id];
        if (index === 0) return usage(accountId, keyId, { walletNano: HUGE_NANO - 1n });
        if (index % 3 === 0) return usage(accountId, keyId, { subscriptionId, periodStart: 1_000, subscriptionNano: BigInt(index), overageNano: 1n, walletNano: 1n });
        if (index % 3 === 1) return usage(accountId, keyId, { subscriptionId, periodStart: 1_000, subscriptionNano: BigInt(index) });
        return usage(accountId, keyId, { walletNano: BigInt(index), shortfallNano: index % 5 === 0 ? 3n : 0n });
      });
      const pools = accounts.map((account) => `wallet:${account.id}`);
      const accountIds = accounts.map((account) => account.id);

      const first = await storage.money.transact(accountIds, (transaction) => transaction.write(instance, {
        rollovers: [], usages: usages.slice(0, 1), holds: pools.map((pool, index) => ({ pool, accountId: accountIds[index]!, heldNano: HUGE_NANO })), now: 10,
      }));
      expect([...first]).toEqual([usages[0]!.entryId]);
      // The first usage again: it moves money once.
      const rest = await storage.money.transact(accountIds, (transaction) => transaction.write(instance, {
        rollovers: [], usages, holds: pools.map((pool, index) => ({ pool, accountId: accountIds[index]!, heldNano: index % 2 === 0 ? 0n : 5n })), now: 20,
      }));
      expect(rest.size).toBe(499);
      expect(rest.has(usages[0]!.entryId)).toBe(false);

      for (const [at, account] of accounts.entries()) {
        const mine = usages.filter((item) => item.accountId === account.id);
        const wallet = mine.reduce((sum, item) => sum + item.walletNano, 0n);
        const subscription = mine.reduce((sum, item) => sum + item.subscriptionNano, 0n);
        const overage = mine.reduce((sum, item) => sum + item.overageNano, 0n);
        expect((await storage.accounts.getById(account.id))?.balanceNano).toBe(account.balanceNano - wallet);
        expect((await storage.keys.getById(keys[at]!.id))?.spentNano).toBe(wallet + subscription);
        expect(await storage.subscriptions.getById(subscriptions[at]!.id)).toMatchObject({
          usedNano: subscriptions[at]!.usedNano + subscription, overageUsedNano: subscriptions[at]!.overageUsedNano + overage,
        });
        const audit = await storage.money.audit(account.id);
        expect(audit.duplicateCharges).toEqual([]);
        expect(audit.keys[0]?.usageSumNano).toBe(wallet + subscription);
        expect(audit.subscriptions[0]).toMatchObject({ usageSumNano: subscription, overageSumNano: overage });
      }
      const entries = (await storage.ledger.listByAccount(accounts[0]!.id, { limit: 100 })).data;
      expect(entries.find((entry) => entry.id === usages[0]!.entryId)).toMatchObject({ amountNano: -(HUGE_NANO - 1n), keyId: keys[0]!.id, reason: null });
      const shortfall = usages.find((item) => item.shortfallNano > 0n)!;
      expect((await storage.ledger.listByAccount(shortfall.accountId, { limit: 100 })).data.find((entry) => entry.id === shortfall.entryId)).toMatchObject({ shortfallNano: 3n });

      const snapshot = await storage.money.transact(accountIds, (transaction) => transaction.read({
        accountIds: [...accountIds, 'acct_missing'], keyIds: keys.map((key) => key.id), subscriptionIds: subscriptions.map((item) => item.id), pools: [...pools, 'wallet:none'],
      }));
      expect(snapshot.accounts.size).toBe(accounts.length);
      expect(snapshot.keys.get(keys[0]!.id)).toEqual({ accountId: accounts[0]!.id, quotaNano: null, spentNano: (await storage.keys.getById(keys[0]!.id))?.spentNano, budget: null });
      expect(snapshot.subscriptions.get(subscriptions[3]!.id)?.plan.quotaNano).toBe(HUGE_NANO);
      expect(snapshot.subscriptions.get(subscriptions[3]!.id)?.subscription).toEqual(await storage.subscriptions.getById(subscriptions[3]!.id));
      expect([...snapshot.heldByPool].sort()).toEqual(pools.flatMap((pool, index) => (index % 2 === 0 ? [] : [[pool, 5n]])).sort());

      const holds = await storage.money.listHolds();
      expect(holds.filter((hold) => hold.instanceId === instance).map((hold) => [hold.pool, hold.heldNano]).sort())
        .toEqual(pools.flatMap((pool, index) => (index % 2 === 0 ? [] : [[pool, 5n]])).sort());
    });

    it('reads the locked accounts\' funds with the lock itself: one statement on accounts before the writes', async () => {
      const accounts = [makeAccount({ balanceNano: HUGE_NANO, creditLineNano: 7n }), makeAccount({ balanceNano: -3n })];
      for (const account of accounts) await storage.accounts.create(account);
      const sent: string[] = [];
      const query = pg.Client.prototype.query;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        const config = args[0] as string | { text?: string };
        sent.push(typeof config === 'string' ? config : config.text ?? '');
        return (query as (...rest: unknown[]) => unknown).apply(this, args);
      } as typeof query;
      let snapshot;
      try {
        const ids = accounts.map((account) => account.id);
        snapshot = await storage.money.transact(ids, (transaction) => transaction.read({ accountIds: ids, keyIds: [], subscriptionIds: [], pools: [] }));
      } finally {
        pg.Client.prototype.query = query;
      }
      expect(sent.filter((text) => text.includes('"accounts"'))).toHaveLength(1);
      expect(snapshot.accounts).toEqual(new Map([
        [accounts[0]!.id, { balanceNano: HUGE_NANO, creditLineNano: 7n }],
        [accounts[1]!.id, { balanceNano: -3n, creditLineNano: 0n }],
      ]));
    });

    it('writes a plain settlement (wallet-paid entries only) in one statement: exact sums, shortfalls, holds, checkpoints, usage rows, and a replay moves nothing', async () => {
      const mine = `pg-plain-${newId('i')}`;
      const accounts = [makeAccount({ balanceNano: HUGE_NANO }), makeAccount({ balanceNano: 1_000n })];
      const keys = [makeApiKey(accounts[0]!.id), makeApiKey(accounts[0]!.id), makeApiKey(accounts[1]!.id)];
      for (const account of accounts) await storage.accounts.create(account);
      for (const key of keys) await storage.keys.create(key);
      const settled = newId('req');
      await storage.money.writeCheckpoints(mine, [settled, newId('req')].map((requestId) => ({ requestId, accountId: accounts[1]!.id, costNano: 5n, reservation: '{}', usageRow: '{}' })), 10);
      const usages = [
        usage(accounts[0]!.id, keys[0]!.id, { walletNano: HUGE_NANO - 10n }),
        usage(accounts[0]!.id, keys[0]!.id, { walletNano: 7n }),
        usage(accounts[0]!.id, keys[1]!.id, { walletNano: 3n }),
        usage(accounts[1]!.id, keys[2]!.id, { walletNano: 0n, shortfallNano: 40n, requestId: settled }),
        usage(accounts[1]!.id, keys[2]!.id, { walletNano: 999n }),
        // Nothing charged and nothing short: no entry.
        usage(accounts[1]!.id, keys[2]!.id, {}),
      ];
      const ids = accounts.map((account) => account.id);
      // The settled requests' usage rows travel in the same statement: awkward text, money above 2^53, NULLs exact.
      const usageRows = usages.map((item, index) => makeUsageLog({
        requestId: item.requestId, accountId: item.accountId, keyId: item.keyId, costNano: index === 0 ? HUGE_NANO : BigInt(index),
        model: AWKWARD_TEXTS[index] ?? null, errorCode: index === 2 ? AWKWARD_TEXTS[6] ?? null : null, ttfbMs: index === 1 ? null : index,
      }));
      const [pool0, pool1] = ids.map((id) => `wallet:${id}`) as [string, string];
      await storage.money.transact(ids, (transaction) => transaction.write(mine, { rollovers: [], usages: [], holds: [{ pool: pool1, accountId: ids[1]!, heldNano: 9n }], now: 5 }));
      const sent: string[] = [];
      const query = pg.Client.prototype.query;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        const config = args[0] as string | { text?: string };
        sent.push(typeof config === 'string' ? config : config.text ?? '');
        return (query as (...rest: unknown[]) => unknown).apply(this, args);
      } as typeof query;
      let fresh: Set<string>;
      try {
        fresh = await storage.money.transact(ids, (transaction) => transaction.write(mine, {
          rollovers: [], usages, now: 20, checkpointsDone: [settled], usageRows,
          holds: [{ pool: pool0, accountId: ids[0]!, heldNano: 11n }, { pool: pool1, accountId: ids[1]!, heldNano: 0n }],
        }));
      } finally {
        pg.Client.prototype.query = query;
      }
      // begin, the accounts' lock, the one write, commit.
      expect(sent.map((text) => text.trim().split(' ')[0]!.toLowerCase())).toEqual(['begin', 'select', 'with', 'commit']);
      expect([...fresh].sort()).toEqual(usages.slice(0, 5).map((item) => item.entryId).sort());
      expect((await storage.accounts.getById(ids[0]!))?.balanceNano).toBe(0n);
      expect((await storage.accounts.getById(ids[1]!))?.balanceNano).toBe(1n);
      expect((await storage.keys.getById(keys[0]!.id))?.spentNano).toBe(HUGE_NANO - 3n);
      expect((await storage.keys.getById(keys[1]!.id))?.spentNano).toBe(3n);
      expect((await storage.keys.getById(keys[2]!.id))?.spentNano).toBe(999n);
      const entries = (await storage.ledger.listByAccount(ids[1]!, { limit: 100 })).data;
      expect(entries.find((entry) => entry.id === usages[3]!.entryId)).toMatchObject({ amountNano: 0n, shortfallNano: 40n });
      expect(entries.some((entry) => entry.id === usages[5]!.entryId)).toBe(false);
      const holds = (await storage.money.listHolds()).filter((hold) => hold.instanceId === mine && ids.includes(hold.accountId));
      expect(holds.map((hold) => [hold.pool, hold.heldNano])).toEqual([[pool0, 11n]]);
      expect(await storage.money.checkpointAccounts(mine)).toEqual([ids[1]]);
      for (const id of ids) expect((await storage.money.audit(id)).duplicateCharges).toEqual([]);

      const storedRows = new Map([...await usageOf(ids[0]!), ...await usageOf(ids[1]!)].map((row) => [row.requestId, row]));
      expect(storedRows.size).toBe(usageRows.length);
      for (const row of usageRows) expect(storedRows.get(row.requestId)).toEqual(row);

      // The same batch again (a commit whose answer was lost): no entry is new, so nothing moves, and no row is written twice.
      const replay = await storage.money.transact(ids, (transaction) => transaction.write(mine, {
        rollovers: [], usages, holds: [], now: 30, usageRows: usageRows.map((row) => ({ ...row, costNano: 1n })),
      }));
      expect(replay.size).toBe(0);
      expect((await usageOf(ids[0]!)).length + (await usageOf(ids[1]!)).length).toBe(usageRows.length);
      expect((await usageOf(ids[0]!)).find((row) => row.requestId === usageRows[0]!.requestId)?.costNano).toBe(HUGE_NANO);
      expect((await storage.accounts.getById(ids[1]!))?.balanceNano).toBe(1n);
      expect((await storage.keys.getById(keys[0]!.id))?.spentNano).toBe(HUGE_NANO - 3n);
    });

    it('deletes the stream checkpoints of the settled requests only', async () => {
      const account = makeAccount({ balanceNano: 100n });
      await storage.accounts.create(account);
      const checkpoint = (requestId: string) => ({ requestId, accountId: account.id, costNano: HUGE_NANO, reservation: '{"r":1}', usageRow: '{"u":"\\"q\\""}' });
      const ids = Array.from({ length: 5 }, () => newId('req'));
      await storage.money.writeCheckpoints(instance, ids.map(checkpoint), 10);
      await storage.money.transact([account.id], (transaction) => transaction.write(instance, { rollovers: [], usages: [], holds: [], checkpointsDone: ids.slice(0, 4), now: 20 }));
      const claimed = await storage.money.transact([account.id], (transaction) => transaction.claimCheckpoints(instance, [account.id]));
      expect(claimed).toEqual([checkpoint(ids[4]!)]);
    });
  });
});
