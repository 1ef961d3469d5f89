import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger } from '../../../src/billing/ledger.js';
import { NANO_PER_USD } from '../../../src/billing/money.js';
import type { Account, ApiKey } from '../../../src/domain/records.js';
import { systemClock } from '../../../src/shared/clock.js';
import { newId } from '../../../src/shared/ids.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { SecretBox } from '../../../src/shared/secret-box.js';
import { openStorage } from '../../../src/storage/open-storage.js';
import type { Storage } from '../../../src/storage/storage.js';

const COST_NANO = 1_000n;

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function account(id: string): Account {
  return {
    id, email: `${id}@ledger.test`, passwordHash: 'unused', tier: 'default', balanceNano: 10n * NANO_PER_USD, creditLineNano: 0n,
    alertBalanceNano: null, status: 'enabled', rpm: null, tpm: null, concurrency: null, deletedAt: null, createdAt: 0, updatedAt: 0,
  };
}

function apiKey(accountId: string): ApiKey {
  const id = newId('key');
  return {
    id, accountId, name: 'turns', secretHash: `hash-${id}`, displayHint: 'sk-…', status: 'enabled', quotaNano: null, spentNano: 0n,
    allowedModels: null, ipAllowlist: null, expiresAt: null, rpm: null, tpm: null, concurrency: null, budget: null, allowedOrigins: null,
    createdAt: 0, updatedAt: 0, environment: null, createdBy: null, playground: false,
  };
}

describe('Ledger: when money transactions start', () => {
  let storage: Storage | null = null;
  let ledger: Ledger | null = null;

  afterEach(async () => {
    await ledger?.close();
    await storage?.close();
    ledger = null;
    storage = null;
  });

  it('a batch that fills, or a reservation that needs storage, starts its transaction on the next turn of the event loop, never inside the call', async () => {
    const opened = await openStorage({ url: 'sqlite::memory:', secretBox: new SecretBox(randomBytes(32)) });
    storage = opened;
    const owner = account(newId('acct'));
    await opened.accounts.create(owner);
    const key = apiKey(owner.id);
    await opened.keys.create(key);

    // Counts the money transactions begun, whatever started them.
    let begun = 0;
    const transact = opened.money.transact.bind(opened.money);
    opened.money.transact = (accountIds, work) => {
      begun += 1;
      return transact(accountIds, work);
    };
    ledger = new Ledger(opened, systemClock, silentLogger, {
      instanceId: 'turns', maxBatch: 2, flushIntervalMs: 60_000, heartbeatMs: 60_000, staleAfterMs: 600_000, checkpointMs: 60_000, factsTtlMs: 2000,
      lease: { capNano: NANO_PER_USD / 2n, scarcityFactor: 64n, shareDivisor: 8n, idleMs: 60_000 },
    });
    const ask = () => ({ accountId: owner.id, keyId: key.id, keyCapped: false, keyBudgeted: false, subscriptions: [], amountNano: COST_NANO, entryId: newId('led') });

    // The first reservation of an account needs a lease from storage.
    const first = ledger.reserve(ask());
    expect(begun).toBe(0);
    const reservation = await first;
    expect(begun).toBe(1);
    const second = await ledger.reserve(ask());
    expect(begun).toBe(1);

    const now = Date.now();
    ledger.settle(reservation, { costNano: COST_NANO, requestId: newId('req'), createdAt: now });
    ledger.settle(second, { costNano: COST_NANO, requestId: newId('req'), createdAt: now });
    // The batch is full (maxBatch 2), yet nothing ran inside settle: the caller's turn goes on undisturbed.
    expect(begun).toBe(1);
    await nextTurn();
    expect(begun).toBe(2);
    await ledger.flush();
    expect(await opened.accounts.getBalances([owner.id])).toEqual(new Map([[owner.id, 10n * NANO_PER_USD - 2n * COST_NANO]]));
  });

  it('a settlement queued while a transaction runs waits for the interval after it, not a second transaction at once', async () => {
    const opened = await openStorage({ url: 'sqlite::memory:', secretBox: new SecretBox(randomBytes(32)) });
    storage = opened;
    const owner = account(newId('acct'));
    await opened.accounts.create(owner);
    const key = apiKey(owner.id);
    await opened.keys.create(key);
    let begun = 0;
    let settleDuringTransaction: (() => void) | null = null;
    const transact = opened.money.transact.bind(opened.money);
    opened.money.transact = (accountIds, work) => {
      begun += 1;
      return transact(accountIds, (transaction) => {
        // A request finishes while this transaction is under way.
        settleDuringTransaction?.();
        settleDuringTransaction = null;
        return work(transaction);
      });
    };
    const intervalMs = 1000;
    ledger = new Ledger(opened, systemClock, silentLogger, {
      instanceId: 'turns-again', maxBatch: 500, flushIntervalMs: intervalMs, heartbeatMs: 60_000, staleAfterMs: 600_000, checkpointMs: 60_000, factsTtlMs: 2000,
      lease: { capNano: NANO_PER_USD / 2n, scarcityFactor: 64n, shareDivisor: 8n, idleMs: 60_000 },
    });
    const active = ledger;
    const ask = () => ({ accountId: owner.id, keyId: key.id, keyCapped: false, keyBudgeted: false, subscriptions: [], amountNano: COST_NANO, entryId: newId('led') });
    const held = await active.reserve(ask());
    const late = await active.reserve(ask());
    expect(begun).toBe(1);
    active.settle(held, { costNano: COST_NANO, requestId: newId('req'), createdAt: Date.now() });
    settleDuringTransaction = () => active.settle(late, { costNano: COST_NANO, requestId: newId('req'), createdAt: Date.now() });
    // The first settlement's transaction runs after the interval; the second settlement arrives during it.
    const until = async (count: number): Promise<void> => {
      while (begun < count) await new Promise((resolve) => setTimeout(resolve, 5));
    };
    await until(2);
    // A quarter of the interval later the second settlement still waits: it was not run straight after the first.
    await new Promise((resolve) => setTimeout(resolve, intervalMs / 4));
    expect(begun).toBe(2);
    await until(3);
    expect(await opened.accounts.getBalances([owner.id])).toEqual(new Map([[owner.id, 10n * NANO_PER_USD - 2n * COST_NANO]]));
  });

  it('a reservation asked while a transaction recomputes its pools is answered from the lease it commits, without a transaction of its own', async () => {
    const opened = await openStorage({ url: 'sqlite::memory:', secretBox: new SecretBox(randomBytes(32)) });
    storage = opened;
    const owner = account(newId('acct'));
    await opened.accounts.create(owner);
    const key = apiKey(owner.id);
    await opened.keys.create(key);
    let begun = 0;
    let duringTransaction: (() => void) | null = null;
    const transact = opened.money.transact.bind(opened.money);
    opened.money.transact = (accountIds, work) => {
      begun += 1;
      return transact(accountIds, (transaction) => {
        duringTransaction?.();
        duringTransaction = null;
        return work(transaction);
      });
    };
    ledger = new Ledger(opened, systemClock, silentLogger, {
      instanceId: 'turns-busy', maxBatch: 500, flushIntervalMs: 60_000, heartbeatMs: 60_000, staleAfterMs: 600_000, checkpointMs: 60_000, factsTtlMs: 2000,
      lease: { capNano: NANO_PER_USD / 2n, scarcityFactor: 64n, shareDivisor: 8n, idleMs: 60_000 },
    });
    const active = ledger;
    const ask = () => ({ accountId: owner.id, keyId: key.id, keyCapped: false, keyBudgeted: false, subscriptions: [], amountNano: COST_NANO, entryId: newId('led') });
    const first = await active.reserve(ask());
    expect(begun).toBe(1);
    active.settle(first, { costNano: COST_NANO, requestId: newId('req'), createdAt: Date.now() });
    let asked: Promise<unknown> | null = null;
    duringTransaction = () => {
      asked = active.reserve(ask());
    };
    await active.flush();
    expect(begun).toBe(2);
    expect(asked).not.toBeNull();
    await asked;
    // Answered from the lease the settlement's transaction kept: no third transaction.
    expect(begun).toBe(2);
    expect(active.heldPools().get(`wallet:${owner.id}`)?.inFlight).toBe(COST_NANO);
  });
});
