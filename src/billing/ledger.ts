import { BatchWriter } from '../shared/batch-writer.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import type { NanoUsd, UsageCharge } from '../storage/records.js';
import type { LedgerCredit, Storage } from '../storage/storage.js';

interface CachedAmount {
  value: NanoUsd;
  fetchedAt: number;
}

export interface LedgerOptions {
  /** How long a balance or key spend read from storage is trusted. */
  cacheTtlMs: number;
  maxBatch: number;
  flushIntervalMs: number;
}

/**
 * The money side of the hot path. Charges are queued and settled in batched transactions; balances and key spend
 * are read from storage at most once per TTL and corrected locally by what is queued but not yet settled, so a
 * request never waits on a database write. Every settled charge is an immutable ledger entry.
 */
export class Ledger {
  readonly #writer: BatchWriter<UsageCharge>;
  readonly #balances = new Map<string, CachedAmount>();
  readonly #keySpend = new Map<string, CachedAmount>();
  readonly #pendingByAccount = new Map<string, NanoUsd>();
  readonly #pendingByKey = new Map<string, NanoUsd>();
  /** Odd while a batch is being committed; moves on every commit and credit, so a read that raced one is not trusted. */
  #epoch = 0;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    logger: Logger,
    private readonly options: LedgerOptions,
  ) {
    this.#writer = new BatchWriter((charges) => this.#settle(charges), {
      name: 'ledger',
      maxBatch: options.maxBatch,
      intervalMs: options.flushIntervalMs,
      retryDelayMs: 500,
    }, logger);
  }

  /** Balance minus charges not yet settled. */
  async availableBalance(accountId: string): Promise<NanoUsd> {
    const settled = await this.#cached(this.#balances, accountId, this.options.cacheTtlMs, () => this.#readBalance(accountId));
    return settled - (this.#pendingByAccount.get(accountId) ?? 0n);
  }

  /**
   * The balance re-read from storage unless it was read in the last `recheckMs`: used before refusing a request
   * for lack of funds, so a top-up made through another instance is seen at once.
   */
  async confirmedBalance(accountId: string, recheckMs = 250): Promise<NanoUsd> {
    const settled = await this.#cached(this.#balances, accountId, Math.min(recheckMs, this.options.cacheTtlMs), () => this.#readBalance(accountId));
    return settled - (this.#pendingByAccount.get(accountId) ?? 0n);
  }

  async #readBalance(accountId: string): Promise<NanoUsd> {
    const balances = await this.storage.accounts.getBalances([accountId]);
    return balances.get(accountId) ?? 0n;
  }

  /** Key spend including charges not yet settled. */
  async keySpent(keyId: string): Promise<NanoUsd> {
    const settled = await this.#cached(this.#keySpend, keyId, this.options.cacheTtlMs, async () => (await this.storage.keys.getById(keyId))?.spentNano ?? 0n);
    return settled + (this.#pendingByKey.get(keyId) ?? 0n);
  }

  charge(charge: UsageCharge): void {
    if (charge.costNano <= 0n) return;
    add(this.#pendingByAccount, charge.accountId, charge.costNano);
    add(this.#pendingByKey, charge.keyId, charge.costNano);
    this.#writer.add(charge);
  }

  /** Top-ups and corrections go straight to storage (they are rare and must be confirmed). */
  async credit(credit: LedgerCredit): Promise<NanoUsd | null> {
    const balance = await this.storage.ledger.applyCredit(credit);
    this.#epoch += 2;
    this.#balances.delete(credit.accountId);
    return balance === null ? null : balance - (this.#pendingByAccount.get(credit.accountId) ?? 0n);
  }

  forgetKey(keyId: string): void {
    this.#keySpend.delete(keyId);
  }

  flush(): Promise<void> {
    return this.#writer.flush();
  }

  close(): Promise<void> {
    return this.#writer.close();
  }

  async #settle(charges: UsageCharge[]): Promise<void> {
    this.#epoch += 1;
    try {
      await this.storage.ledger.settleCharges(charges);
    } finally {
      this.#epoch += 1;
    }
    for (const charge of charges) {
      add(this.#pendingByAccount, charge.accountId, -charge.costNano);
      add(this.#pendingByKey, charge.keyId, -charge.costNano);
      const balance = this.#balances.get(charge.accountId);
      if (balance !== undefined) balance.value -= charge.costNano;
      const spent = this.#keySpend.get(charge.keyId);
      if (spent !== undefined) spent.value += charge.costNano;
    }
  }

  async #cached(cache: Map<string, CachedAmount>, id: string, ttlMs: number, read: () => Promise<NanoUsd>): Promise<NanoUsd> {
    const now = this.clock.now();
    const entry = cache.get(id);
    if (entry !== undefined && now - entry.fetchedAt < ttlMs) return entry.value;
    let value = 0n;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const epoch = this.#epoch;
      value = await read();
      if (epoch === this.#epoch && epoch % 2 === 0) {
        cache.set(id, { value, fetchedAt: this.clock.now() });
        return value;
      }
    }
    // Every read raced a commit: use the last one uncached; it is off by at most the batch being committed.
    return value;
  }
}

function add(map: Map<string, NanoUsd>, id: string, amount: NanoUsd): void {
  const next = (map.get(id) ?? 0n) + amount;
  if (next === 0n) map.delete(id);
  else map.set(id, next);
}
