import { describe, expect, it } from 'vitest';
import { Ledger } from '../../src/billing/ledger.js';
import { ManualClock } from '../../src/shared/clock.js';
import { silentLogger } from '../../src/shared/logger.js';
import type { ApiKey, UsageCharge } from '../../src/storage/records.js';
import type { LedgerCredit, Storage } from '../../src/storage/storage.js';

const TTL = 1000;

/** Just the storage calls the ledger makes, over two maps, with hooks to hold a read or fail a settle. */
class FakeStorage {
  readonly balances = new Map<string, bigint>();
  readonly spent = new Map<string, bigint>();
  readonly settled: UsageCharge[][] = [];
  balanceReads = 0;
  keyReads = 0;
  /** When set, the next getBalances call returns this instead of reading the map. */
  heldBalanceRead: Promise<Map<string, bigint>> | null = null;
  failSettles = 0;
  settleGate: Promise<void> | null = null;

  readonly accounts = {
    getBalances: async (ids: string[]): Promise<Map<string, bigint>> => {
      this.balanceReads += 1;
      const held = this.heldBalanceRead;
      if (held !== null) {
        this.heldBalanceRead = null;
        return held;
      }
      return new Map(ids.filter((id) => this.balances.has(id)).map((id) => [id, this.balances.get(id) as bigint]));
    },
  };

  readonly keys = {
    getById: async (id: string): Promise<ApiKey | null> => {
      this.keyReads += 1;
      const spentNano = this.spent.get(id);
      return spentNano === undefined ? null : ({ id, spentNano } as unknown as ApiKey);
    },
  };

  readonly ledger = {
    settleCharges: async (charges: UsageCharge[]): Promise<void> => {
      if (this.failSettles > 0) {
        this.failSettles -= 1;
        throw new Error('deadlock');
      }
      for (const charge of charges) {
        this.balances.set(charge.accountId, (this.balances.get(charge.accountId) ?? 0n) - charge.costNano);
        this.spent.set(charge.keyId, (this.spent.get(charge.keyId) ?? 0n) + charge.costNano);
      }
      this.settled.push([...charges]);
      if (this.settleGate !== null) await this.settleGate;
    },
    applyCredit: async (credit: LedgerCredit): Promise<bigint | null> => {
      const balance = this.balances.get(credit.accountId);
      if (balance === undefined) return null;
      this.balances.set(credit.accountId, balance + credit.amountNano);
      return balance + credit.amountNano;
    },
  };

  asStorage(): Storage {
    return this as unknown as Storage;
  }
}

let entry = 0;
const charge = (accountId: string, keyId: string, costNano: bigint): UsageCharge => ({
  entryId: `led_${(entry += 1)}`, accountId, keyId, requestId: `req_${entry}`, costNano, createdAt: 0,
});
const credit = (accountId: string, amountNano: bigint): LedgerCredit => ({ entryId: `cr_${(entry += 1)}`, accountId, kind: 'topup' as LedgerCredit['kind'], amountNano, reason: null, createdAt: 0 });

function setup(): { storage: FakeStorage; clock: ManualClock; ledger: Ledger } {
  const storage = new FakeStorage();
  storage.balances.set('acc', 1000n);
  storage.spent.set('key', 50n);
  const clock = new ManualClock(1_000_000);
  const ledger = new Ledger(storage.asStorage(), clock, silentLogger, { cacheTtlMs: TTL, maxBatch: 100, flushIntervalMs: 60_000 });
  return { storage, clock, ledger };
}

describe('Ledger balances', () => {
  it('subtracts pending charges before settlement and stays right after, without double counting', async () => {
    const { storage, ledger } = setup();
    expect(await ledger.availableBalance('acc')).toBe(1000n);
    ledger.charge(charge('acc', 'key', 100n));
    ledger.charge(charge('acc', 'key', 30n));
    expect(await ledger.availableBalance('acc')).toBe(870n);
    await ledger.flush();
    expect(storage.balances.get('acc')).toBe(870n);
    expect(await ledger.availableBalance('acc')).toBe(870n);
    expect(storage.balanceReads).toBe(1);
    await ledger.close();
  });

  it('is right when the first read happens after the charge', async () => {
    const { storage, ledger } = setup();
    ledger.charge(charge('acc', 'key', 100n));
    expect(await ledger.availableBalance('acc')).toBe(900n);
    await ledger.flush();
    expect(await ledger.availableBalance('acc')).toBe(900n);
    expect(storage.balanceReads).toBe(1);
  });

  it('stays right after the cache expires and storage is read again', async () => {
    const { storage, clock, ledger } = setup();
    await ledger.availableBalance('acc');
    ledger.charge(charge('acc', 'key', 100n));
    await ledger.flush();
    clock.advance(TTL);
    expect(await ledger.availableBalance('acc')).toBe(900n);
    expect(storage.balanceReads).toBe(2);
  });

  it('reads storage at most once per TTL', async () => {
    const { storage, clock, ledger } = setup();
    await ledger.availableBalance('acc');
    storage.balances.set('acc', 5000n); // changed by another instance
    clock.advance(TTL - 1);
    expect(await ledger.availableBalance('acc')).toBe(1000n);
    expect(storage.balanceReads).toBe(1);
    clock.advance(1);
    expect(await ledger.availableBalance('acc')).toBe(5000n);
    expect(storage.balanceReads).toBe(2);
  });

  it('treats an unknown account as zero', async () => {
    const { ledger } = setup();
    expect(await ledger.availableBalance('nobody')).toBe(0n);
    ledger.charge(charge('nobody', 'key', 5n));
    expect(await ledger.availableBalance('nobody')).toBe(-5n);
  });

  it('keeps accounts apart', async () => {
    const { storage, ledger } = setup();
    storage.balances.set('other', 70n);
    ledger.charge(charge('acc', 'key', 100n));
    expect(await ledger.availableBalance('other')).toBe(70n);
    expect(await ledger.availableBalance('acc')).toBe(900n);
  });

  it('ignores charges of zero or less', async () => {
    const { storage, ledger } = setup();
    ledger.charge(charge('acc', 'key', 0n));
    ledger.charge(charge('acc', 'key', -5n));
    expect(await ledger.availableBalance('acc')).toBe(1000n);
    await ledger.flush();
    expect(storage.settled).toEqual([]);
  });
});

describe('Ledger key spend', () => {
  it('adds pending charges before settlement and stays right after', async () => {
    const { storage, clock, ledger } = setup();
    expect(await ledger.keySpent('key')).toBe(50n);
    ledger.charge(charge('acc', 'key', 100n));
    expect(await ledger.keySpent('key')).toBe(150n);
    await ledger.flush();
    expect(storage.spent.get('key')).toBe(150n);
    expect(await ledger.keySpent('key')).toBe(150n);
    expect(storage.keyReads).toBe(1);
    clock.advance(TTL);
    expect(await ledger.keySpent('key')).toBe(150n);
    expect(storage.keyReads).toBe(2);
  });

  it('treats an unknown key as zero and re-reads after forgetKey', async () => {
    const { storage, ledger } = setup();
    expect(await ledger.keySpent('ghost')).toBe(0n);
    await ledger.keySpent('key');
    storage.spent.set('key', 999n);
    ledger.forgetKey('key');
    expect(await ledger.keySpent('key')).toBe(999n);
  });
});

describe('Ledger credits', () => {
  it('invalidates the cached balance and returns the new balance net of pending charges', async () => {
    const { storage, ledger } = setup();
    await ledger.availableBalance('acc');
    ledger.charge(charge('acc', 'key', 100n));
    expect(await ledger.credit(credit('acc', 500n))).toBe(1400n);
    expect(await ledger.availableBalance('acc')).toBe(1400n);
    expect(storage.balanceReads).toBe(2);
    await ledger.flush();
    expect(await ledger.availableBalance('acc')).toBe(1400n);
  });

  it('returns null for an unknown account', async () => {
    const { ledger } = setup();
    expect(await ledger.credit(credit('nobody', 5n))).toBeNull();
  });
});

describe('Ledger races', () => {
  it('does not trust a balance read that raced a settle', async () => {
    const { storage, ledger } = setup();
    ledger.charge(charge('acc', 'key', 100n));
    let deliver: (value: Map<string, bigint>) => void = () => {};
    storage.heldBalanceRead = new Promise((resolve) => { deliver = resolve; });
    const reading = ledger.availableBalance('acc');
    await ledger.flush(); // storage: 900, pending: 0
    deliver(new Map([['acc', 1000n]])); // the read saw the balance before the commit
    expect(await reading).toBe(900n);
    expect(storage.balanceReads).toBe(2);
    // What was cached is the fresh value, not the stale one.
    expect(await ledger.availableBalance('acc')).toBe(900n);
    expect(storage.balanceReads).toBe(2);
  });

  it('does not cache a read taken while a settle is being committed', async () => {
    const { storage, ledger } = setup();
    ledger.charge(charge('acc', 'key', 100n));
    let commit: () => void = () => {};
    storage.settleGate = new Promise((resolve) => { commit = resolve; });
    const flushing = ledger.flush();
    await new Promise((resolve) => setImmediate(resolve));
    expect(storage.settled).toHaveLength(1); // written in storage, not yet acknowledged
    const during = await ledger.availableBalance('acc');
    // Off by at most the batch in flight, never by more.
    expect([800n, 900n]).toContain(during);
    commit();
    await flushing;
    const readsBefore = storage.balanceReads;
    expect(await ledger.availableBalance('acc')).toBe(900n);
    expect(storage.balanceReads).toBe(readsBefore + 1);
  });

  it('keeps charges pending through a failed settle and settles each exactly once', async () => {
    const { storage, ledger } = setup();
    expect(await ledger.availableBalance('acc')).toBe(1000n);
    storage.failSettles = 1;
    ledger.charge(charge('acc', 'key', 100n));
    const flushing = ledger.flush();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(storage.settled).toEqual([]);
    expect(await ledger.availableBalance('acc')).toBe(900n);
    expect(await ledger.keySpent('key')).toBe(150n);
    await flushing;
    expect(storage.settled).toHaveLength(1);
    expect(storage.balances.get('acc')).toBe(900n);
    expect(await ledger.availableBalance('acc')).toBe(900n);
    expect(await ledger.keySpent('key')).toBe(150n);
  });
});
