/**
 * The ledger's outbox, over a real SQLite database whose money transactions are made to fail: a settlement the
 * database refuses is on disk at once (with its usage row), a stop while the database is away does not wait for it,
 * and the next start of the same instance id applies it exactly once — applying the same file again (a crash before
 * it was removed) moves no money. In a live process the settlement is committed once the database answers again,
 * with no call from outside, and its file goes.
 */
import { randomBytes } from 'node:crypto';
import { cp, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../../src/billing/ledger.js';
import type { LedgerOptions } from '../../../src/billing/ledger-requests.js';
import { NANO_PER_USD } from '../../../src/billing/money.js';
import { SettlementOutbox, decodeKeptSettlement, encodeKeptSettlement } from '../../../src/billing/settlement-outbox.js';
import type { Account, ApiKey } from '../../../src/domain/records.js';
import type { UsageLogRow } from '../../../src/domain/usage-records.js';
import { systemClock } from '../../../src/shared/clock.js';
import { newId } from '../../../src/shared/ids.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { SecretBox } from '../../../src/shared/secret-box.js';
import { openStorage } from '../../../src/storage/open-storage.js';
import type { Storage } from '../../../src/storage/storage.js';

const BALANCE_NANO = 10n * NANO_PER_USD;
const COST_NANO = 1_234_567n;
/** Small against the balance, so the first reservation also leases room for the next (no storage needed for it). */
const HOLD_NANO = NANO_PER_USD / 100n;

function account(id: string): Account {
  return {
    id, email: `${id}@outbox.test`, passwordHash: 'unused', tier: 'default', balanceNano: BALANCE_NANO, creditLineNano: 0n,
    alertBalanceNano: null, status: 'enabled', rpm: null, tpm: null, concurrency: null, deletedAt: null, createdAt: 0, updatedAt: 0,
  };
}

function apiKey(accountId: string): ApiKey {
  const id = newId('key');
  return {
    id, accountId, name: 'outbox', secretHash: `hash-${id}`, displayHint: 'sk-…', status: 'enabled', quotaNano: null, spentNano: 0n,
    allowedModels: null, ipAllowlist: null, expiresAt: null, rpm: null, tpm: null, concurrency: null, budget: null, allowedOrigins: null,
    createdAt: 0, updatedAt: 0, environment: null, createdBy: null, playground: false,
  };
}

function usageRow(requestId: string, accountId: string, keyId: string): UsageLogRow {
  return {
    requestId, accountId, keyId, model: 'outbox-model', channelId: 'chn_1', protocol: 'openai', endpoint: 'chat.completions', stream: false,
    status: 200, errorCode: null, promptTokens: 10, completionTokens: 4, cachedTokens: 0, reasoningTokens: 0, totalTokens: 14, costNano: COST_NANO,
    latencyMs: 12, ttfbMs: 3, attempts: 1, attemptedChannels: ['chn_1'], createdAt: Date.now(),
  };
}

/** Money transactions throw (as a refused connection does) while `down.now` is true. */
function failingWhileDown(storage: Storage, down: { now: boolean }): void {
  const transact = storage.money.transact.bind(storage.money);
  storage.money.transact = (accountIds, work) => (down.now
    ? Promise.reject(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))
    : transact(accountIds, work));
}

async function waitUntil(what: string, done: () => boolean | Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const started = Date.now();
  while (!(await done())) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('settlement outbox', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setUp() {
    const directory = await mkdtemp(path.join(tmpdir(), 'unigate-outbox-'));
    cleanups.push(() => rm(directory, { recursive: true, force: true }));
    const storage = await openStorage({ url: `sqlite:${path.join(directory, 'gateway.db')}`, secretBox: new SecretBox(randomBytes(32)) });
    cleanups.push(() => storage.close());
    const owner = account(newId('acct'));
    await storage.accounts.create(owner);
    const key = apiKey(owner.id);
    await storage.keys.create(key);
    const outbox = new SettlementOutbox(path.join(directory, 'settlement-outbox', 'outbox-test'));
    const options: LedgerOptions = {
      instanceId: 'outbox-test', maxBatch: 100, flushIntervalMs: 5, heartbeatMs: 60_000, staleAfterMs: 600_000, checkpointMs: 60_000, factsTtlMs: 2000,
      lease: { capNano: NANO_PER_USD / 2n, scarcityFactor: 64n, shareDivisor: 8n, idleMs: 60_000 }, outbox,
    };
    const down = { now: false };
    failingWhileDown(storage, down);
    const started: Ledger[] = [];
    cleanups.push(async () => {
      down.now = false;
      for (const ledger of started) await ledger.close();
    });
    const startLedger = async (): Promise<Ledger> => {
      const ledger = new Ledger(storage, systemClock, silentLogger, options);
      await ledger.start();
      started.push(ledger);
      return ledger;
    };
    const balance = async (): Promise<bigint> => (await storage.accounts.getBalances([owner.id])).get(owner.id) ?? 0n;
    const usageRows = async (requestId: string): Promise<number> => (await storage.usage.query({ accountId: owner.id }, { limit: 100 })).data.filter((row) => row.requestId === requestId).length;
    return { directory, storage, owner, key, outbox, down, startLedger, balance, usageRows };
  }

  it('round-trips a kept settlement exactly (amounts beyond 2^53, its usage row)', () => {
    const row = { ...usageRow('req_1', 'acct_1', 'key_1'), costNano: 2n ** 60n + 1n };
    const kept = {
      reservation: { entryId: 'led_1', accountId: 'acct_1', keyId: 'key_1', keyCapped: true, keyBudgeted: false, subscriptionId: null, candidateSubscriptions: [], amountNano: 2n ** 61n, parts: { wallet: 2n ** 61n, subscription: 0n, overage: 0n, key: 2n ** 61n, budget: 0n } },
      costNano: 2n ** 60n + 1n, requestId: 'req_1', createdAt: 5, checkpointed: true, usageRow: row,
    };
    expect(decodeKeptSettlement(encodeKeptSettlement(kept))).toEqual(kept);
    expect(() => decodeKeptSettlement('{"requestId":"x","costNano":1.5}')).toThrow();
  });

  it('keeps a refused settlement on disk, does not wait for the database at stop, and the next start applies it once', async () => {
    const { owner, key, outbox, down, startLedger, balance, usageRows } = await setUp();
    const first = await startLedger();
    const reservation = await first.reserve({ accountId: owner.id, keyId: key.id, keyCapped: false, keyBudgeted: false, subscriptions: [], amountNano: HOLD_NANO, entryId: newId('led') });
    down.now = true;
    const requestId = newId('req');
    first.settle(reservation, { costNano: COST_NANO, requestId, createdAt: Date.now(), usageRow: usageRow(requestId, owner.id, key.id) });
    await waitUntil('the settlement kept on disk', () => first.keptSettlements === 1);
    const [file] = (await outbox.list()).files;
    expect(file?.settlements.map((settlement) => [settlement.requestId, settlement.costNano, settlement.usageRow?.requestId])).toEqual([[requestId, COST_NANO, requestId]]);
    // Stopping while the database is away leaves the settlement on disk instead of waiting.
    await first.close();
    expect(await balance()).toBe(BALANCE_NANO);

    down.now = false;
    const copy = `${file?.file}.copy`;
    await cp(file?.file ?? '', copy);
    await startLedger();
    expect(await balance()).toBe(BALANCE_NANO - COST_NANO);
    expect(await usageRows(requestId)).toBe(1);
    expect(await outbox.list()).toEqual({ files: [], unreadable: [] });

    // The same file again (a crash before it was removed): nothing moves a second time.
    await cp(copy, file?.file ?? '');
    await rm(copy);
    await startLedger();
    expect(await balance()).toBe(BALANCE_NANO - COST_NANO);
    expect(await usageRows(requestId)).toBe(1);
    expect(await outbox.list()).toEqual({ files: [], unreadable: [] });
  });

  it('sets a damaged file aside instead of failing the start, and names it', async () => {
    const { outbox, startLedger } = await setUp();
    await outbox.keep([], Date.now());
    const [file] = (await outbox.list()).files;
    await writeFile(file?.file ?? '', '{"requestId":"req_1","costNano":"12"\n');
    await startLedger();
    const after = await readdir(outbox.directory);
    expect(after).toEqual([`${path.basename(file?.file ?? '')}.unreadable`]);
    expect(await outbox.list()).toEqual({ files: [], unreadable: [] });
  });

  it('in a live process, commits the kept settlement by itself once the database answers, and removes its file', async () => {
    const { owner, key, outbox, down, startLedger, balance } = await setUp();
    const ledger = await startLedger();
    const reservation = await ledger.reserve({ accountId: owner.id, keyId: key.id, keyCapped: false, keyBudgeted: false, subscriptions: [], amountNano: HOLD_NANO, entryId: newId('led') });
    down.now = true;
    const requestId = newId('req');
    ledger.settle(reservation, { costNano: COST_NANO, requestId, createdAt: Date.now(), usageRow: usageRow(requestId, owner.id, key.id) });
    await waitUntil('the settlement kept on disk', () => ledger.keptSettlements === 1);
    expect((await outbox.list()).files).toHaveLength(1);
    // More settlements while the database is away are kept as they come, not at the next failed transaction.
    const later = await ledger.reserve({ accountId: owner.id, keyId: key.id, keyCapped: false, keyBudgeted: false, subscriptions: [], amountNano: HOLD_NANO, entryId: newId('led') });
    ledger.settle(later, { costNano: 7n, requestId: newId('req'), createdAt: Date.now(), usageRow: null });
    await waitUntil('the second settlement kept on disk', () => ledger.keptSettlements === 2, 300);
    down.now = false;
    await waitUntil('the kept settlements committed', async () => (await balance()) === BALANCE_NANO - COST_NANO - 7n);
    await waitUntil('the outbox emptied', async () => (await readdir(outbox.directory)).length === 0);
    expect(ledger.keptSettlements).toBe(0);
  });
});
