import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TIER_RPM, DEFAULT_TIER_TPM } from '../../src/storage/migrations/0007-account-lifecycle-and-key-budgets.js';
import { newId } from '../../src/shared/ids.js';
import { SecretBox } from '../../src/shared/secret-box.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { Account, ApiKey } from '../../src/domain/records.js';
import type { UsageCharge, UsageLogRow } from '../../src/domain/usage-records.js';
import type { Storage } from '../../src/storage/storage.js';
import { InvalidCursorError } from '../../src/storage/usage-cursor.js';
import {
  HUGE_NANO, makeAccount, makeAnnouncement, makeApiKey, makeChannel, makeModel, makePlan, makeSubscription,
  makeTier, makeUsageLog,
} from './fixtures.js';
import { describeMoneyContract } from './money-contract.js';

/** What a dialect's test file provides to the shared suite. */
export interface StorageHarness {
  /** Storage URL of a fresh, empty database. */
  url: string;
  /** Everything stored at rest for channels, as text (file bytes for SQLite, the raw column for PostgreSQL). */
  readChannelSecretsAtRest(storage: Storage): Promise<string>;
}

/**
 * The behaviour every `Storage` implementation must have. `setUp` runs once in `beforeAll`; the suite opens the
 * database itself (and opens it a second time to prove migrations are idempotent).
 */
export function describeStorageContract(setUp: () => Promise<StorageHarness>, tearDown: () => Promise<void>): void {
  const secretBox = new SecretBox(randomBytes(32));
  let harness: StorageHarness;
  let storage: Storage;

  beforeAll(async () => {
    harness = await setUp();
    storage = await openStorage({ url: harness.url, secretBox });
  });

  afterAll(async () => {
    await storage?.close();
    await tearDown();
  });

  async function seedAccountWithKeys(keyCount: number, balanceNano = 0n): Promise<{ account: Account; keys: ApiKey[] }> {
    const account = makeAccount({ balanceNano });
    await storage.accounts.create(account);
    const keys: ApiKey[] = [];
    for (let index = 0; index < keyCount; index += 1) {
      const key = makeApiKey(account.id);
      await storage.keys.create(key);
      keys.push(key);
    }
    return { account, keys };
  }

  describe('basics', () => {
    it('pings', async () => {
      expect(await storage.ping()).toBe(true);
    });

    it('runs migrations idempotently: a second open of the same database sees the same data', async () => {
      const account = makeAccount({ balanceNano: HUGE_NANO });
      await storage.accounts.create(account);
      const again = await openStorage({ url: harness.url, secretBox });
      try {
        expect(again.dialect).toBe(storage.dialect);
        expect(await again.accounts.getById(account.id)).toEqual(account);
      } finally {
        await again.close();
      }
      expect(await storage.ping()).toBe(true);
    });
  });

  describe('accounts', () => {
    it('round-trips every field, with money above 2^53 exact', async () => {
      const account = makeAccount({
        passwordHash: null,
        balanceNano: HUGE_NANO,
        creditLineNano: -(2n ** 62n) + 7n,
        alertBalanceNano: 9_007_199_254_740_993n,
        createdAt: 1_700_000_000_123,
        updatedAt: 1_700_000_000_456,
      });
      await storage.accounts.create(account);
      const byId = await storage.accounts.getById(account.id);
      expect(byId).toEqual(account);
      expect(typeof byId?.balanceNano).toBe('bigint');
      expect(typeof byId?.createdAt).toBe('number');
      expect(await storage.accounts.getByEmail(account.email)).toEqual(account);
      expect(await storage.accounts.getById('acct_missing')).toBeNull();
      expect(await storage.accounts.getByEmail('missing@example.test')).toBeNull();
    });

    it('rejects a duplicate email', async () => {
      const account = makeAccount();
      await storage.accounts.create(account);
      await expect(storage.accounts.create(makeAccount({ email: account.email }))).rejects.toThrow();
    });

    it('updates only the fields given, null clears, and returns null for a missing account', async () => {
      const account = makeAccount({ alertBalanceNano: 10n });
      await storage.accounts.create(account);
      const updated = await storage.accounts.update(
        account.id,
        { tier: 'pro', alertBalanceNano: null, passwordHash: undefined, creditLineNano: HUGE_NANO },
        1_800_000_000_000,
      );
      expect(updated).toEqual({
        ...account, tier: 'pro', alertBalanceNano: null, creditLineNano: HUGE_NANO, updatedAt: 1_800_000_000_000,
      });
      expect(await storage.accounts.getById(account.id)).toEqual(updated);
      expect(await storage.accounts.update('acct_missing', { tier: 'x' }, 1)).toBeNull();
    });

    it('pages by id with an exclusive cursor', async () => {
      const all: string[] = [];
      let after: string | null = null;
      for (;;) {
        const page: Awaited<ReturnType<Storage['accounts']['list']>> = await storage.accounts.list({ limit: 2, after });
        expect(page.data.length).toBeLessThanOrEqual(2);
        all.push(...page.data.map((account) => account.id));
        if (page.nextCursor === null) break;
        expect(page.nextCursor).toBe(page.data[page.data.length - 1]?.id);
        after = page.nextCursor;
      }
      const everything = await storage.accounts.list({ limit: 10_000 });
      expect(everything.nextCursor).toBeNull();
      expect(all).toEqual(everything.data.map((account) => account.id));
      expect(all).toEqual([...all].sort());
      expect(new Set(all).size).toBe(all.length);
      expect(all.length).toBeGreaterThan(2);
    });

    it('returns an exact page with nextCursor when more rows exist, and null on the last page', async () => {
      const ids = ['zz_page_1', 'zz_page_2', 'zz_page_3'];
      for (const id of ids) await storage.accounts.create(makeAccount({ id, email: `${id}@example.test` }));
      const first = await storage.accounts.list({ limit: 2, after: 'zz_page_0' });
      expect(first.data.map((account) => account.id)).toEqual(['zz_page_1', 'zz_page_2']);
      expect(first.nextCursor).toBe('zz_page_2');
      const second = await storage.accounts.list({ limit: 2, after: first.nextCursor });
      expect(second.data.map((account) => account.id)).toEqual(['zz_page_3']);
      expect(second.nextCursor).toBeNull();
      const exact = await storage.accounts.list({ limit: 3, after: 'zz_page_0' });
      expect(exact.data).toHaveLength(3);
      expect(exact.nextCursor).toBeNull();
    });

    it('reads many balances at once', async () => {
      const first = makeAccount({ balanceNano: HUGE_NANO });
      const second = makeAccount({ balanceNano: -5n });
      await storage.accounts.create(first);
      await storage.accounts.create(second);
      const balances = await storage.accounts.getBalances([first.id, second.id, 'acct_missing', first.id]);
      expect(balances).toEqual(new Map([[first.id, HUGE_NANO], [second.id, -5n]]));
      expect(await storage.accounts.getBalances([])).toEqual(new Map());
    });
  });

  describe('api keys', () => {
    it('round-trips every field and finds a key by its secret hash', async () => {
      const account = makeAccount();
      await storage.accounts.create(account);
      const key = makeApiKey(account.id, {
        status: 'disabled',
        quotaNano: HUGE_NANO,
        spentNano: HUGE_NANO - 1n,
        allowedModels: ['gpt-4o', 'claude-sonnet'],
        ipAllowlist: ['10.0.0.0/8', '::1'],
        expiresAt: 1_900_000_000_000,
        rpm: 60,
        tpm: 100_000,
        concurrency: 4,
      });
      const bare = makeApiKey(account.id, { allowedModels: [], ipAllowlist: null });
      await storage.keys.create(key);
      await storage.keys.create(bare);
      expect(await storage.keys.getById(key.id)).toEqual(key);
      expect(await storage.keys.getBySecretHash(key.secretHash)).toEqual(key);
      expect(await storage.keys.getById(bare.id)).toEqual(bare);
      expect(await storage.keys.getBySecretHash('nope')).toBeNull();
    });

    it('rejects a duplicate secret hash and a key for a missing account', async () => {
      const { account, keys } = await seedAccountWithKeys(1);
      await expect(storage.keys.create(makeApiKey(account.id, { secretHash: keys[0]?.secretHash }))).rejects.toThrow();
      await expect(storage.keys.create(makeApiKey('acct_missing'))).rejects.toThrow();
    });

    it('lists keys of one account page by page', async () => {
      const { account, keys } = await seedAccountWithKeys(5);
      await seedAccountWithKeys(2);
      const first = await storage.keys.listByAccount(account.id, { limit: 3 });
      expect(first.nextCursor).not.toBeNull();
      const second = await storage.keys.listByAccount(account.id, { limit: 3, after: first.nextCursor });
      expect(second.nextCursor).toBeNull();
      expect([...first.data, ...second.data].map((key) => key.id)).toEqual(keys.map((key) => key.id).sort());
    });

    it('lists the secret hashes of every key in id order, page by page from an id', async () => {
      const { keys } = await seedAccountWithKeys(4);
      const all: Array<{ id: string; secretHash: string }> = [];
      let after: string | null = null;
      for (;;) {
        const page = await storage.keys.listSecretHashes(after, 3);
        all.push(...page);
        if (page.length < 3) break;
        after = page.at(-1)?.id ?? null;
      }
      expect(all.map((row) => row.id)).toEqual([...all.map((row) => row.id)].sort());
      for (const key of keys) expect(all).toContainEqual({ id: key.id, secretHash: key.secretHash });
      const sorted = [...keys].sort((a, b) => a.id.localeCompare(b.id));
      expect((await storage.keys.listSecretHashes(sorted[1]?.id ?? null, 100)).map((row) => row.id)).not.toContain(sorted[0]?.id);
    });

    it('patches fields, with null clearing and undefined keeping', async () => {
      const { keys } = await seedAccountWithKeys(1);
      const key = { ...keys[0]!, allowedModels: ['a'], rpm: 5 };
      await storage.keys.update(key.id, { allowedModels: ['a'], rpm: 5 }, key.updatedAt);
      const updated = await storage.keys.update(
        key.id,
        { status: 'revoked', allowedModels: null, ipAllowlist: ['1.2.3.4'], quotaNano: 7n, rpm: undefined },
        1_800_000_000_000,
      );
      expect(updated).toEqual({
        ...key, status: 'revoked', allowedModels: null, ipAllowlist: ['1.2.3.4'], quotaNano: 7n, updatedAt: 1_800_000_000_000,
      });
      expect(await storage.keys.update('key_missing', { name: 'x' }, 1)).toBeNull();
    });
  });

  describe('account lifecycle, budgets and origins', () => {
    it('round-trips a budget, writes only the limit when asked, and finds keys by a listed origin', async () => {
      const account = makeAccount();
      await storage.accounts.create(account);
      const budget = { period: 'week' as const, limitNano: HUGE_NANO, spentNano: 5n, periodStart: 1_700_000_000_000 };
      const key = makeApiKey(account.id, { budget, allowedOrigins: ['https://a_b.example.com', 'http://localhost:5173'] });
      await storage.keys.create(key);
      expect(await storage.keys.getById(key.id)).toEqual(key);
      const raised = await storage.keys.update(key.id, { budget: { ...budget, limitNano: 9n, spentNano: 0n }, budgetLimitOnly: true }, 1);
      expect(raised?.budget).toEqual({ ...budget, limitNano: 9n });
      expect((await storage.keys.update(key.id, { budget: null }, 2))?.budget).toBeNull();
      expect(await storage.keys.anyAllowsOrigin('http://localhost:5173')).toBe(true);
      expect(await storage.keys.anyAllowsOrigin('https://a_b.example.com')).toBe(true);
      // LIKE wildcards in an origin match only themselves.
      expect(await storage.keys.anyAllowsOrigin('https://a%b.example.com')).toBe(false);
      expect(await storage.keys.anyAllowsOrigin('http://localhost:517')).toBe(false);
      await storage.keys.update(key.id, { status: 'revoked' }, 3);
      expect(await storage.keys.anyAllowsOrigin('http://localhost:5173')).toBe(false);
    });

    it('erases an account: keys revoked, subscriptions cancelled, personal data gone, the row kept; again changes nothing', async () => {
      const { account, keys } = await seedAccountWithKeys(2, 1_000n);
      await storage.accounts.update(account.id, { status: 'disabled', rpm: 5, tpm: 6, concurrency: 7, alertBalanceNano: 3n }, 10);
      const erased = await storage.accounts.erase(account.id, 20);
      expect(erased).toMatchObject({
        id: account.id, status: 'deleted', email: `deleted+${account.id}@deleted.invalid`, passwordHash: null, alertBalanceNano: null,
        balanceNano: 1_000n, deletedAt: 20, rpm: 5,
      });
      for (const key of keys) expect((await storage.keys.getById(key.id))?.status).toBe('revoked');
      expect(await storage.accounts.getByEmail(account.email)).toBeNull();
      expect(await storage.accounts.erase(account.id, 30)).toEqual(erased);
      expect(await storage.accounts.erase('acct_missing', 30)).toBeNull();
    });
  });

  describe('channels', () => {
    it('round-trips every field, including the upstream keys', async () => {
      const channel = makeChannel({ type: 'azure-openai', baseUrl: null, enabled: false, headers: {}, settings: {} });
      await storage.channels.create(channel);
      expect(await storage.channels.getById(channel.id)).toEqual(channel);
      expect(await storage.channels.getByName(channel.name)).toEqual(channel);
      const full = makeChannel();
      await storage.channels.create(full);
      expect(await storage.channels.getById(full.id)).toEqual(full);
      const all = await storage.channels.listAll();
      expect(all).toEqual(expect.arrayContaining([channel, full]));
    });

    it('rejects a duplicate name', async () => {
      const channel = makeChannel();
      await storage.channels.create(channel);
      await expect(storage.channels.create(makeChannel({ name: channel.name }))).rejects.toThrow();
    });

    it('never stores upstream keys in plaintext, also after an update', async () => {
      const channel = makeChannel();
      await storage.channels.create(channel);
      const rotated = `sk-rotated-${randomBytes(8).toString('hex')}`;
      await storage.channels.update(channel.id, { apiKeys: [rotated] }, 1_800_000_000_000);
      expect((await storage.channels.getById(channel.id))?.apiKeys).toEqual([rotated]);
      const atRest = await harness.readChannelSecretsAtRest(storage);
      expect(atRest).toContain(channel.name);
      for (const secret of [...channel.apiKeys, rotated]) expect(atRest).not.toContain(secret);
    });

    it('patches, pages and deletes', async () => {
      const channel = makeChannel();
      await storage.channels.create(channel);
      const updated = await storage.channels.update(
        channel.id,
        { priority: 1, enabled: false, baseUrl: null, models: {}, settings: { apiVersion: '2024-10-21' }, weight: undefined },
        1_800_000_000_000,
      );
      expect(updated).toEqual({
        ...channel, priority: 1, enabled: false, baseUrl: null, models: {}, settings: { apiVersion: '2024-10-21' },
        updatedAt: 1_800_000_000_000,
      });
      expect(await storage.channels.update('chan_missing', { priority: 1 }, 1)).toBeNull();

      const page = await storage.channels.list({ limit: 1 });
      expect(page.data).toHaveLength(1);
      expect(page.nextCursor).toBe(page.data[0]?.id);

      expect(await storage.channels.delete(channel.id)).toBe(true);
      expect(await storage.channels.delete(channel.id)).toBe(false);
      expect(await storage.channels.getById(channel.id)).toBeNull();
    });
  });

  describe('models', () => {
    it('round-trips, patches pricing as a whole, pages and deletes', async () => {
      const model = makeModel({ public: false, upstream: null, rpm: null, tpm: null });
      await storage.models.create(model);
      expect(await storage.models.getById(model.id)).toEqual(model);
      expect(await storage.models.listAll()).toContainEqual(model);

      const pricing = { ...model.pricing, inputPerMtokNano: null, perMcharNano: HUGE_NANO * 2n };
      const updated = await storage.models.update(model.id, { pricing, public: true, kind: 'embedding' }, 1_800_000_000_000);
      expect(updated).toEqual({ ...model, pricing, public: true, kind: 'embedding', updatedAt: 1_800_000_000_000 });
      expect(await storage.models.update('missing', { public: true }, 1)).toBeNull();
      const cache = { ttlSeconds: 3600, hitPriceBasisPoints: 1, shared: true };
      expect(await storage.models.update(model.id, { cache }, 1_800_000_000_001)).toEqual({ ...updated, cache, updatedAt: 1_800_000_000_001 });
      expect((await storage.models.update(model.id, { cache: null }, 1_800_000_000_002))?.cache).toBeNull();
      await storage.models.update(model.id, { cache: model.cache }, 1_800_000_000_000);

      const page = await storage.models.list({ limit: 100 });
      expect(page.data).toContainEqual(updated);
      expect(await storage.models.delete(model.id)).toBe(true);
      expect(await storage.models.getById(model.id)).toBeNull();
      await expect(storage.models.create(makeModel({ id: 'dup-model' }))).resolves.toBeUndefined();
      await expect(storage.models.create(makeModel({ id: 'dup-model' }))).rejects.toThrow();
    });
  });

  describe('plans and subscriptions', () => {
    it('round-trips plans, finds them by name, rejects duplicate names and patches', async () => {
      const plan = makePlan({ overageLimitNano: null, rpm: 10 });
      await storage.plans.create(plan);
      expect(await storage.plans.getById(plan.id)).toEqual(plan);
      expect(await storage.plans.getByName(plan.name)).toEqual(plan);
      await expect(storage.plans.create(makePlan({ name: plan.name }))).rejects.toThrow();
      const updated = await storage.plans.update(plan.id, { overagePolicy: 'payg', rpm: null }, 1_800_000_000_000);
      expect(updated).toEqual({ ...plan, overagePolicy: 'payg', rpm: null, updatedAt: 1_800_000_000_000 });
      expect(await storage.plans.update('plan_missing', { rpm: 1 }, 1)).toBeNull();
      const page = await storage.plans.list({ limit: 50 });
      expect(page.data).toContainEqual(updated);
    });

    it('round-trips subscriptions and lists them by account', async () => {
      const account = makeAccount();
      const plan = makePlan();
      await storage.accounts.create(account);
      await storage.plans.create(plan);
      const first = makeSubscription(account.id, plan.id, { id: `${account.id}_sub_1` });
      const second = makeSubscription(account.id, plan.id, { id: `${account.id}_sub_2`, status: 'cancelled', usedNano: 0n });
      await storage.subscriptions.create(first);
      await storage.subscriptions.create(second);
      expect(await storage.subscriptions.getById(first.id)).toEqual(first);
      expect(await storage.subscriptions.getById('sub_missing')).toBeNull();
      expect(await storage.subscriptions.listByAccount(account.id)).toEqual([first, second]);
      expect(await storage.subscriptions.listByAccount('acct_missing')).toEqual([]);
    });
  });

  describe('tiers', () => {
    it('has the built-in default tier, with its finite default limits, after migrations', async () => {
      const builtIn = await storage.tiers.getByName('default');
      expect(builtIn).toMatchObject({ name: 'default', rpm: DEFAULT_TIER_RPM, tpm: DEFAULT_TIER_TPM });
      expect(typeof builtIn?.createdAt).toBe('number');
    });

    it('round-trips every field, limits above 2^31 included, and rejects a duplicate name', async () => {
      const tier = makeTier({ rpm: 1, tpm: 2 ** 40 + 3 });
      await storage.tiers.create(tier);
      expect(await storage.tiers.getByName(tier.name)).toEqual(tier);
      expect(await storage.tiers.getByName('no-such-tier')).toBeNull();
      await expect(storage.tiers.create(makeTier({ name: tier.name }))).rejects.toThrow();
      const unlimited = makeTier({ rpm: null, tpm: null });
      await storage.tiers.create(unlimited);
      expect(await storage.tiers.getByName(unlimited.name)).toEqual(unlimited);
    });

    it('patches only the fields given, null clears, and returns null for a missing tier', async () => {
      const tier = makeTier();
      await storage.tiers.create(tier);
      const updated = await storage.tiers.update(tier.name, { tpm: null }, 1_800_000_000_000);
      expect(updated).toEqual({ ...tier, tpm: null, updatedAt: 1_800_000_000_000 });
      expect(await storage.tiers.update(tier.name, { rpm: 5 }, 1_800_000_000_001)).toEqual({ ...tier, rpm: 5, tpm: null, updatedAt: 1_800_000_000_001 });
      expect(await storage.tiers.update('no-such-tier', { rpm: 1 }, 1)).toBeNull();
    });

    it('lists every tier by name and pages with an exclusive name cursor', async () => {
      const created = [makeTier(), makeTier(), makeTier()];
      for (const tier of created) await storage.tiers.create(tier);
      const all = await storage.tiers.listAll();
      const names = all.map((tier) => tier.name);
      expect(names).toEqual([...names].sort());
      expect(names).toEqual(expect.arrayContaining(['default', ...created.map((tier) => tier.name)]));
      const paged: string[] = [];
      let after: string | null = null;
      for (;;) {
        const page: Awaited<ReturnType<Storage['tiers']['list']>> = await storage.tiers.list({ limit: 2, after });
        expect(page.data.length).toBeLessThanOrEqual(2);
        paged.push(...page.data.map((tier) => tier.name));
        if (page.nextCursor === null) break;
        after = page.nextCursor;
      }
      expect(paged).toEqual(names);
    });

    it('deletes by name, once', async () => {
      const tier = makeTier();
      await storage.tiers.create(tier);
      expect(await storage.tiers.delete(tier.name)).toBe(true);
      expect(await storage.tiers.delete(tier.name)).toBe(false);
      expect(await storage.tiers.getByName(tier.name)).toBeNull();
    });
  });

  describe('ledger', () => {
    it('applies credits, returns the new balance, and is idempotent per entry id', async () => {
      const account = makeAccount({ balanceNano: 0n });
      await storage.accounts.create(account);
      // Entries of the same time are listed by id: the ids' own times fix which comes first.
      const credit = {
        entryId: newId('led', 1_000), accountId: account.id, kind: 'topup' as const, amountNano: HUGE_NANO, reason: 'stripe', createdAt: 5,
      };
      expect(await storage.ledger.applyCredit(credit)).toBe(HUGE_NANO);
      expect(await storage.ledger.applyCredit(credit)).toBe(HUGE_NANO);
      const correction = { ...credit, entryId: newId('led', 2_000), kind: 'correction' as const, amountNano: -3n, reason: null };
      expect(await storage.ledger.applyCredit(correction)).toBe(HUGE_NANO - 3n);
      expect((await storage.accounts.getById(account.id))?.balanceNano).toBe(HUGE_NANO - 3n);
      expect(await storage.ledger.sumByAccount(account.id)).toBe(HUGE_NANO - 3n);

      const entries = await storage.ledger.listByAccount(account.id, { limit: 10 });
      expect(entries.nextCursor).toBeNull();
      expect(entries.data).toEqual([
        { id: credit.entryId, accountId: account.id, kind: 'topup', amountNano: HUGE_NANO, keyId: null, requestId: null, reason: 'stripe', createdAt: 5, shortfallNano: 0n },
        { id: correction.entryId, accountId: account.id, kind: 'correction', amountNano: -3n, keyId: null, requestId: null, reason: null, createdAt: 5, shortfallNano: 0n },
      ]);
    });

    it('lists newest first by kind and time, sums before a time, and totals usage per UTC day', async () => {
      const { account, keys } = await seedAccountWithKeys(1, 0n);
      const day = 86_400_000;
      const base = 20_000 * day;
      const credit = (at: number, kind: 'topup' | 'correction' | 'refund', amount: bigint) => storage.ledger.applyCredit({
        entryId: newId('led', at), accountId: account.id, kind, amountNano: amount, reason: `${kind} at ${at}`, createdAt: at,
      });
      await credit(base + 10, 'topup', 5_000_000_000n);
      await credit(base + day + 20, 'correction', -1_000_000_000n);
      await credit(base + 2 * day + 30, 'refund', -500n);
      await storage.ledger.settleCharges([
        { entryId: newId('use', base + 100), accountId: account.id, keyId: keys[0]!.id, requestId: 'r1', costNano: 7n, createdAt: base + 100 },
        { entryId: newId('use', base + 200), accountId: account.id, keyId: keys[0]!.id, requestId: 'r2', costNano: 11n, createdAt: base + 200 },
        { entryId: newId('use', base + day + 5), accountId: account.id, keyId: keys[0]!.id, requestId: 'r3', costNano: 13n, createdAt: base + day + 5 },
      ]);

      const newest = await storage.ledger.listByAccount(account.id, { limit: 2 }, { order: 'desc', excludeKinds: ['usage'] });
      expect(newest.data.map((entry) => entry.kind)).toEqual(['refund', 'correction']);
      const rest = await storage.ledger.listByAccount(account.id, { limit: 2, after: newest.nextCursor }, { order: 'desc', excludeKinds: ['usage'] });
      expect(rest.data.map((entry) => entry.kind)).toEqual(['topup']);
      expect(rest.nextCursor).toBeNull();
      const topups = await storage.ledger.listByAccount(account.id, { limit: 10 }, { kinds: ['topup', 'refund'], from: base + day });
      expect(topups.data.map((entry) => entry.kind)).toEqual(['refund']);
      expect((await storage.ledger.listByAccount(account.id, { limit: 10 }, { kinds: [] })).data).toEqual([]);
      expect((await storage.ledger.listByAccount(account.id, { limit: 10 }, { to: base + 150 })).data).toHaveLength(2);

      expect(await storage.ledger.sumByAccount(account.id, base + day)).toBe(5_000_000_000n - 18n);
      expect(await storage.ledger.sumByAccount(account.id)).toBe(5_000_000_000n - 1_000_000_000n - 500n - 31n);
      expect(await storage.ledger.dailyUsage(account.id, base, base + 3 * day)).toEqual([
        { day: base, entries: 2, amountNano: -18n, shortfallNano: 0n, lastAt: base + 200 },
        { day: base + day, entries: 1, amountNano: -13n, shortfallNano: 0n, lastAt: base + day + 5 },
      ]);
      expect(await storage.ledger.dailyUsage(account.id, base + 150, base + day)).toEqual([
        { day: base, entries: 1, amountNano: -11n, shortfallNano: 0n, lastAt: base + 200 },
      ]);
    });

    it('returns null for a credit to a missing account and writes nothing', async () => {
      const entryId = newId('led');
      const result = await storage.ledger.applyCredit({
        entryId, accountId: 'acct_missing', kind: 'refund', amountNano: 1n, reason: null, createdAt: 1,
      });
      expect(result).toBeNull();
      expect(await storage.ledger.sumByAccount('acct_missing')).toBe(0n);
    });

    it('settles a large batch over several accounts and keys, idempotently', async () => {
      const seeded = await Promise.all([3, 1, 2, 4, 2].map((keyCount) => seedAccountWithKeys(keyCount)));
      for (const { account } of seeded) {
        await storage.ledger.applyCredit({
          entryId: newId('led'), accountId: account.id, kind: 'topup', amountNano: HUGE_NANO, reason: null, createdAt: 1,
        });
      }
      const charges: UsageCharge[] = [];
      for (let index = 0; index < 1_300; index += 1) {
        const { account, keys } = seeded[index % seeded.length]!;
        const key = keys[index % keys.length]!;
        charges.push({
          entryId: newId('use'),
          accountId: account.id,
          keyId: key.id,
          requestId: newId('req'),
          // A few charges above 2^53 so any float arithmetic would show.
          costNano: index % 97 === 0 ? 2n ** 54n + BigInt(index) : BigInt(1_000 + index * 7),
          createdAt: 1_700_000_000_000 + index,
        });
      }

      const expectedCost = (filter: (charge: UsageCharge) => boolean, batch: UsageCharge[]): bigint =>
        batch.filter(filter).reduce((sum, charge) => sum + charge.costNano, 0n);

      const firstHalf = charges.slice(0, 800);
      await storage.ledger.settleCharges(firstHalf);
      // Replays the first 800 (already settled, including duplicates inside the batch) plus 500 new ones.
      await storage.ledger.settleCharges([...charges, ...charges.slice(0, 50)]);
      await storage.ledger.settleCharges(charges.slice(100, 200));

      for (const { account, keys } of seeded) {
        const cost = expectedCost((charge) => charge.accountId === account.id, charges);
        const balance = (await storage.accounts.getById(account.id))?.balanceNano;
        expect(balance).toBe(HUGE_NANO - cost);
        expect(await storage.ledger.sumByAccount(account.id)).toBe(balance);
        for (const key of keys) {
          const spent = (await storage.keys.getById(key.id))?.spentNano;
          expect(spent).toBe(expectedCost((charge) => charge.keyId === key.id, charges));
        }
      }

      const { account } = seeded[0]!;
      const entries = await storage.ledger.listByAccount(account.id, { limit: 1_000 });
      const usage = entries.data.filter((entry) => entry.kind === 'usage');
      expect(usage).toHaveLength(charges.filter((charge) => charge.accountId === account.id).length);
      const sample = charges.find((charge) => charge.accountId === account.id)!;
      expect(usage.find((entry) => entry.id === sample.entryId)).toEqual({
        id: sample.entryId, accountId: account.id, kind: 'usage', amountNano: -sample.costNano, keyId: sample.keyId,
        requestId: sample.requestId, reason: null, createdAt: sample.createdAt, shortfallNano: 0n,
      });
    });

    it('settles nothing for an empty batch, and rolls back the whole batch on a failure', async () => {
      await expect(storage.ledger.settleCharges([])).resolves.toBeUndefined();
      const { account, keys } = await seedAccountWithKeys(1, 1_000n);
      const good: UsageCharge = {
        entryId: newId('use'), accountId: account.id, keyId: keys[0]!.id, requestId: 'r', costNano: 10n, createdAt: 1,
      };
      const orphan: UsageCharge = { ...good, entryId: newId('use'), accountId: 'acct_missing' };
      await expect(storage.ledger.settleCharges([good, orphan])).rejects.toThrow();
      expect((await storage.accounts.getById(account.id))?.balanceNano).toBe(1_000n);
      expect((await storage.keys.getById(keys[0]!.id))?.spentNano).toBe(0n);
      await storage.ledger.settleCharges([good]);
      expect((await storage.accounts.getById(account.id))?.balanceNano).toBe(990n);
    });

    it('settles concurrent overlapping batches and credits without losing updates', async () => {
      const seeded = await Promise.all(Array.from({ length: 6 }, () => seedAccountWithKeys(2)));
      const batches = Array.from({ length: 6 }, (_, batch) => {
        // Each batch visits the accounts in a different order.
        const order = batch % 2 === 0 ? seeded : [...seeded].reverse();
        return Array.from({ length: 60 }, (_, index): UsageCharge => {
          const { account, keys } = order[(index + batch) % order.length]!;
          return {
            entryId: newId('use'), accountId: account.id, keyId: keys[index % 2]!.id, requestId: newId('req'),
            costNano: BigInt(batch * 1_000 + index + 1), createdAt: index,
          };
        });
      });
      const credits = seeded.map(({ account }) => storage.ledger.applyCredit({
        entryId: newId('led'), accountId: account.id, kind: 'topup', amountNano: 1_000_000n, reason: null, createdAt: 1,
      }));
      await Promise.all([...batches.map((batch) => storage.ledger.settleCharges(batch)), ...credits]);
      const charges = batches.flat();
      for (const { account, keys } of seeded) {
        const cost = charges.filter((charge) => charge.accountId === account.id).reduce((sum, charge) => sum + charge.costNano, 0n);
        expect((await storage.accounts.getById(account.id))?.balanceNano).toBe(1_000_000n - cost);
        expect(await storage.ledger.sumByAccount(account.id)).toBe(1_000_000n - cost);
        for (const key of keys) {
          const spent = charges.filter((charge) => charge.keyId === key.id).reduce((sum, charge) => sum + charge.costNano, 0n);
          expect((await storage.keys.getById(key.id))?.spentNano).toBe(spent);
        }
      }
    });

    it('keeps the ledger sum equal to the balance across credits and charges', async () => {
      const { account, keys } = await seedAccountWithKeys(2);
      let expected = 0n;
      for (let round = 0; round < 5; round += 1) {
        const amount = BigInt(round + 1) * 1_000_000_007n;
        expected += amount;
        const balance = await storage.ledger.applyCredit({
          entryId: newId('led'), accountId: account.id, kind: round % 2 === 0 ? 'topup' : 'referral', amountNano: amount,
          reason: null, createdAt: round,
        });
        expect(balance).toBe(expected);
        const charges = Array.from({ length: 20 }, (_, index): UsageCharge => ({
          entryId: newId('use'), accountId: account.id, keyId: keys[index % 2]!.id, requestId: newId('req'),
          costNano: BigInt(index * 1_234_567), createdAt: round,
        }));
        await storage.ledger.settleCharges(charges);
        expected -= charges.reduce((sum, charge) => sum + charge.costNano, 0n);
      }
      expect((await storage.accounts.getById(account.id))?.balanceNano).toBe(expected);
      expect(await storage.ledger.sumByAccount(account.id)).toBe(expected);
      const pageOne = await storage.ledger.listByAccount(account.id, { limit: 60 });
      const pageTwo = await storage.ledger.listByAccount(account.id, { limit: 60, after: pageOne.nextCursor });
      expect(pageOne.nextCursor).not.toBeNull();
      expect(pageTwo.nextCursor).toBeNull();
      const all = [...pageOne.data, ...pageTwo.data];
      expect(all).toHaveLength(105);
      expect(all.reduce((sum, entry) => sum + entry.amountNano, 0n)).toBe(expected);
    });
  });

  describe('usage logs', () => {
    const accountId = `acct_usage_${randomBytes(4).toString('hex')}`;
    const otherAccountId = `acct_usage_other_${randomBytes(4).toString('hex')}`;
    const base = 1_750_000_000_000;
    let rows: UsageLogRow[];

    beforeAll(async () => {
      rows = Array.from({ length: 700 }, (_, index) => makeUsageLog({
        requestId: `req_${String(index).padStart(4, '0')}_${randomBytes(3).toString('hex')}`,
        accountId: index % 3 === 0 ? otherAccountId : accountId,
        keyId: `key_${index % 4}`,
        model: index % 2 === 0 ? 'gpt-4o' : 'claude-sonnet',
        status: index % 10 === 0 ? 429 : 200,
        errorCode: index % 10 === 0 ? 'rate_limited' : null,
        stream: index % 5 === 0,
        cacheHit: index % 6 === 1,
        // Some rows paid for hosted tool calls (the huge cost row among them, to keep its money exact).
        ...(index % 8 === 1 ? { hostedTools: { webSearch: 3, webFetch: index % 16 === 1 ? 2 : 0, fileSearch: 1 }, hostedToolCostNano: index === 1 ? HUGE_NANO - 1n : 32_500_000n } : {}),
        ttfbMs: index % 7 === 0 ? null : index,
        costNano: index === 1 ? HUGE_NANO : BigInt(index),
        // Ten rows share each millisecond, so the request id breaks ties.
        createdAt: base + Math.floor(index / 10),
      }));
      await storage.usage.insertBatch(rows);
    });

    const newestFirst = (list: UsageLogRow[]): UsageLogRow[] => [...list].sort((left, right) =>
      right.createdAt - left.createdAt || (right.requestId < left.requestId ? -1 : right.requestId > left.requestId ? 1 : 0));

    async function queryAll(filter: Parameters<Storage['usage']['query']>[0], limit: number): Promise<UsageLogRow[]> {
      const result: UsageLogRow[] = [];
      let after: string | null = null;
      for (let pages = 0; pages < 1_000; pages += 1) {
        const page: Awaited<ReturnType<Storage['usage']['query']>> = await storage.usage.query(filter, { limit, after });
        result.push(...page.data);
        if (page.nextCursor === null) return result;
        after = page.nextCursor;
      }
      throw new Error('pagination did not end');
    }

    it('round-trips rows exactly', async () => {
      const page = await storage.usage.query({ accountId }, { limit: 1_000 });
      const byId = new Map(page.data.map((row) => [row.requestId, row]));
      for (const row of rows.filter((candidate) => candidate.accountId === accountId)) {
        expect(byId.get(row.requestId)).toEqual(row);
      }
    });

    it('ignores request ids already logged', async () => {
      const extra = makeUsageLog({ accountId, createdAt: base - 1_000 });
      await storage.usage.insertBatch([{ ...rows[1]!, costNano: 1n }, extra]);
      const all = await queryAll({ accountId }, 500);
      expect(all.find((row) => row.requestId === rows[1]!.requestId)?.costNano).toBe(HUGE_NANO);
      expect(all.at(-1)).toEqual(extra);
      rows.push(extra);
    });

    it('keeps a batch written while a money transaction is open, though that transaction rolls back', async () => {
      const row = makeUsageLog({ accountId, createdAt: base - 2_000 });
      let written: Promise<void> | undefined;
      await expect(storage.money.transact([], async (transaction) => {
        await transaction.read({ accountIds: [], keyIds: [], subscriptionIds: [], pools: [] });
        written = storage.usage.insertBatch([row]);
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error('rolled back');
      })).rejects.toThrow('rolled back');
      await written;
      expect((await queryAll({ accountId }, 500)).at(-1)).toEqual(row);
      rows.push(row);
    });

    it('pages newest first with an opaque cursor, without gaps or repeats', async () => {
      const expected = newestFirst(rows.filter((row) => row.accountId === accountId));
      const walked = await queryAll({ accountId }, 37);
      expect(walked.map((row) => row.requestId)).toEqual(expected.map((row) => row.requestId));
      const first = await storage.usage.query({ accountId }, { limit: 5 });
      expect(first.nextCursor).not.toBeNull();
      expect(first.nextCursor).not.toContain(first.data[4]!.requestId);
    });

    it('filters by account, key, model, status and an inclusive time range', async () => {
      const from = base + 10;
      const to = base + 20;
      const filter = { accountId, keyId: 'key_1', model: 'claude-sonnet', status: 200, from, to };
      const expected = newestFirst(rows.filter((row) => row.accountId === accountId && row.keyId === 'key_1'
        && row.model === 'claude-sonnet' && row.status === 200 && row.createdAt >= from && row.createdAt <= to));
      expect(expected.length).toBeGreaterThan(0);
      expect(expected.some((row) => row.createdAt === from)).toBe(true);
      expect(expected.some((row) => row.createdAt === to)).toBe(true);
      expect(await queryAll(filter, 3)).toEqual(expected);

      const limited = await queryAll({ status: 429, accountId: otherAccountId }, 50);
      expect(limited.map((row) => row.requestId))
        .toEqual(newestFirst(rows.filter((row) => row.status === 429 && row.accountId === otherAccountId)).map((row) => row.requestId));
      expect(await storage.usage.query({ keyId: 'key_none' }, { limit: 10 })).toEqual({ data: [], nextCursor: null });
    });

    it('rejects a cursor it did not issue', async () => {
      await expect(storage.usage.query({}, { limit: 10, after: 'not-a-cursor' })).rejects.toBeInstanceOf(InvalidCursorError);
    });
  });

  describe('announcements', () => {
    it('lists the active ones newest first, pages and deletes', async () => {
      const now = 2_000_000_000_000;
      const old = makeAnnouncement({ publishedAt: now - 3_000, level: 'warning' });
      const recent = makeAnnouncement({ publishedAt: now - 1_000, expiresAt: now + 1, level: 'critical' });
      const expired = makeAnnouncement({ publishedAt: now - 2_000, expiresAt: now });
      const future = makeAnnouncement({ publishedAt: now + 1 });
      for (const announcement of [old, recent, expired, future]) await storage.announcements.create(announcement);

      expect(await storage.announcements.listActive(now, 10)).toEqual([recent, old]);
      expect(await storage.announcements.listActive(now, 1)).toEqual([recent]);

      const byId = [old, recent, expired, future].sort((left, right) => (left.id < right.id ? -1 : 1));
      const page = await storage.announcements.list({ limit: 3 });
      expect(page.data).toEqual(byId.slice(0, 3));
      expect(page.nextCursor).toBe(byId[2]?.id);
      expect(await storage.announcements.list({ limit: 3, after: page.nextCursor })).toEqual({ data: byId.slice(3), nextCursor: null });

      expect(await storage.announcements.delete(old.id)).toBe(true);
      expect(await storage.announcements.delete(old.id)).toBe(false);
      expect(await storage.announcements.listActive(now, 10)).toEqual([recent]);
    });
  });

  describe('fx rates and settings', () => {
    it('stores a single fx row, replaced on every set', async () => {
      expect(await storage.fx.get()).toBeNull();
      const first = { base: 'USD' as const, rates: { EUR: '0.92', JPY: '151.23' }, asOf: 1, source: 'ecb', updatedAt: 2 };
      await storage.fx.set(first);
      expect(await storage.fx.get()).toEqual(first);
      const second = { base: 'USD' as const, rates: { GBP: '0.79' }, asOf: 3, source: 'manual', updatedAt: 4 };
      await storage.fx.set(second);
      expect(await storage.fx.get()).toEqual(second);
    });

    it('upserts settings', async () => {
      expect(await storage.settings.get('site.name')).toBeNull();
      await storage.settings.set('site.name', 'Gateway', 1);
      await storage.settings.set('site.name', 'Gateway 2', 2);
      await storage.settings.set('empty', '', 3);
      expect(await storage.settings.get('site.name')).toBe('Gateway 2');
      expect(await storage.settings.get('empty')).toBe('');
    });
  });

  describeMoneyContract(() => storage);
}
