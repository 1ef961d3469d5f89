import type { KeyBudget, LedgerEntry, LedgerEntryKind, NanoUsd, Page, PageRequest, Plan, Subscription, SubscriptionStatus } from '../domain/records.js';
import type { UsageCharge, UsageLogRow } from '../domain/usage-records.js';
import type { SubscriptionPatch } from './storage.js';

// The contracts of the money and ledger repositories: reservations, settlement, recovery, the ledger check, credits.

/** What a money transaction reads about the pools it touches (every instance's holds summed). */
export interface MoneySnapshot {
  accounts: Map<string, { balanceNano: NanoUsd; creditLineNano: NanoUsd }>;
  keys: Map<string, { accountId: string; quotaNano: NanoUsd | null; spentNano: NanoUsd; budget: KeyBudget | null }>;
  subscriptions: Map<string, { subscription: Subscription; plan: Plan }>;
  /** Projects whose cap or budget takes part (absent: none asked for). */
  projects?: Map<string, { accountId: string; quotaNano: NanoUsd | null; spentNano: NanoUsd; budget: KeyBudget | null }>;
  /** The budget of each end-customer pool asked for (by pool id; absent: the customer has no budget). */
  customerBudgets?: Map<string, KeyBudget>;
  /** Sum over every instance and holder of the holds on each pool asked for. */
  heldByPool: Map<string, NanoUsd>;
  /** What each holder asked for (a batch) holds, by pool (a holder without rows is absent). */
  holderHolds?: Map<string, Map<string, NanoUsd>>;
}

export interface MoneySnapshotRequest {
  accountIds: string[];
  keyIds: string[];
  subscriptionIds: string[];
  projectIds?: string[];
  pools: string[];
  /** End customers whose budgets the transaction reads. */
  customers?: Array<{ accountId: string; customer: string }>;
  /** Holders (batches' holds) whose rows the transaction reads. */
  holders?: string[];
}

/** A hold made for a holder (a batch) by a transaction: one row per pool, never replaced. */
export interface HolderGrant {
  holder: string;
  pool: string;
  accountId: string;
  heldNano: NanoUsd;
}

/** What one settlement charged against a holder's hold on a pool: taken off the hold only when the entry is new. */
export interface HolderTake {
  entryId: string;
  holder: string;
  pool: string;
  takenNano: NanoUsd;
}

/** One request's settled charge, split between the wallet and a subscription. */
export interface SettledUsage {
  entryId: string;
  accountId: string;
  keyId: string;
  /** The key's project whose cap or budget took part: its spend grows by the charge (absent or null: none). */
  projectId?: string | null;
  requestId: string;
  /** Taken from the account balance (a `usage` ledger entry of -walletNano). */
  walletNano: NanoUsd;
  /** Cost the funds could not cover: recorded on the ledger entry, not taken. */
  shortfallNano: NanoUsd;
  subscriptionId: string | null;
  periodStart: number | null;
  /** Taken from the subscription's period quota. */
  subscriptionNano: NanoUsd;
  /** Part of walletNano counted as the subscription's overage. */
  overageNano: NanoUsd;
  createdAt: number;
  /** The end customer whose budget the charge counts against, in the budget's current period (null: none). */
  customer?: { customer: string; periodStart: number } | null;
}

export interface SubscriptionRollover {
  id: string;
  status: SubscriptionStatus;
  currentPeriodStart: number;
  currentPeriodEnd: number;
  /** A new period began: used quota and overage start again from zero. */
  resetUsage: boolean;
}

/** A key budget's new period: its spend starts again from zero. */
export interface BudgetRollover {
  keyId: string;
  periodStart: number;
}

/** A project budget's new period: its spend starts again from zero. */
export interface ProjectBudgetRollover {
  projectId: string;
  periodStart: number;
}

export interface MoneyWrites {
  rollovers: SubscriptionRollover[];
  budgetRollovers?: BudgetRollover[];
  projectBudgetRollovers?: ProjectBudgetRollover[];
  usages: SettledUsage[];
  /** This instance's holds after the transaction, absolute (0 deletes the row). */
  holds: Array<{ pool: string; accountId: string; heldNano: NanoUsd }>;
  /** Requests settled by this transaction whose stream checkpoints go with the settlement. */
  checkpointsDone?: string[];
  /** Holds made for holders (batches) by this transaction. */
  holderGrants?: HolderGrant[];
  /** Charges against holders' holds (applied only with their settlement's new entry, so a replay takes nothing twice). */
  holderTakes?: HolderTake[];
  /**
   * The usage rows of the requests this transaction settles, written with their settlement (a row already stored is
   * skipped, so a replayed batch writes none twice). Absent or empty: the usage log writes them.
   */
  usageRows?: UsageLogRow[];
  now: number;
}

/** One stream's checkpoint as stored: the billing layer encodes the reservation and the usage row. */
export interface StoredCheckpoint {
  requestId: string;
  accountId: string;
  costNano: NanoUsd;
  reservation: string;
  usageRow: string;
}

export interface MoneyTransaction {
  read(request: MoneySnapshotRequest): Promise<MoneySnapshot>;
  /** Returns the entry ids that were new (replayed ids move no money). */
  write(instanceId: string, writes: MoneyWrites): Promise<Set<string>>;
  /** A plan change or cancellation, under the account's lock so no settlement interleaves with it. */
  updateSubscription(id: string, patch: SubscriptionPatch, now: number): Promise<Subscription | null>;
  /**
   * Whether the instance is gone: no heartbeat row, or its last heartbeat is older than `staleBefore` (null: gone
   * regardless, its own restart). PostgreSQL locks its row, so a recovery and the instance's registration do not interleave.
   */
  instanceGone(instanceId: string, staleBefore: number | null): Promise<boolean>;
  /** Deletes and returns the instance's checkpoints of these accounts: whoever deletes one is the one that charges it. */
  claimCheckpoints(instanceId: string, accountIds: string[]): Promise<StoredCheckpoint[]>;
  /** The instance's holds by pool. */
  instanceHolds(instanceId: string): Promise<Map<string, NanoUsd>>;
  /** Drops the instance's holds and its heartbeat row. */
  dropInstance(instanceId: string): Promise<void>;
  /** Drops a holder's holds (a batch's, at its end); returns what they held in all. Dropping them again drops nothing. */
  dropHolder(holder: string): Promise<NanoUsd>;
  /** Usage rows written with the charges (a request id already logged is skipped). */
  insertUsageRows(rows: UsageLogRow[]): Promise<void>;
  /** Of these entry ids, those a settlement already wrote (a ledger entry or a subscription usage row). */
  settledEntryIds(entryIds: string[]): Promise<Set<string>>;
}

export interface MoneyHold {
  instanceId: string;
  pool: string;
  accountId: string;
  heldNano: NanoUsd;
}

/** Raw sums the ledger check compares (billing/ledger-check.ts decides what is a mismatch). */
export interface LedgerAudit {
  /** `reversedNano`: what refunds and disputes took back (the sum of `refund` entries, zero or negative). */
  accounts: Array<{ id: string; balanceNano: NanoUsd; creditLineNano: NanoUsd; ledgerSumNano: NanoUsd; heldNano: NanoUsd; reversedNano: NanoUsd }>;
  keys: Array<{ id: string; accountId: string; spentNano: NanoUsd; usageSumNano: NanoUsd }>;
  subscriptions: Array<{ id: string; accountId: string; usedNano: NanoUsd; overageUsedNano: NanoUsd; usageSumNano: NanoUsd; overageSumNano: NanoUsd }>;
  /** Requests with more than one usage entry (must be none). */
  duplicateCharges: string[];
}

export interface MoneyRepository {
  /**
   * Runs `work` in one transaction that owns the given accounts: PostgreSQL locks their rows in id order (every
   * change of an account's funds, holds or usage goes through this lock); SQLite's write transaction is exclusive.
   */
  transact<T>(accountIds: string[], work: (transaction: MoneyTransaction) => Promise<T>): Promise<T>;
  /** At start: drops whatever this instance id held before (a crash) and records its heartbeat; returns the holds dropped. */
  registerInstance(instanceId: string, now: number): Promise<number>;
  heartbeat(instanceId: string, now: number): Promise<void>;
  /** At a clean stop: drops the instance's holds and its row. */
  releaseInstance(instanceId: string): Promise<void>;
  /**
   * Instances whose last heartbeat is older than `before`, and instances with holds or stream checkpoints but no
   * heartbeat row: each is recovered (MoneyTransaction.instanceGone … dropInstance).
   */
  staleInstances(before: number): Promise<string[]>;
  /** The accounts of an instance's stream checkpoints (the accounts its recovery locks). */
  checkpointAccounts(instanceId: string): Promise<string[]>;
  /** Upserts this instance's stream checkpoints, many rows per statement. */
  writeCheckpoints(instanceId: string, checkpoints: StoredCheckpoint[], now: number): Promise<void>;
  listHolds(accountId?: string): Promise<MoneyHold[]>;
  /** The holders (batches' holds) with rows: each with its account and when its rows last changed. */
  listHolders(): Promise<Array<{ holder: string; accountId: string; updatedAt: number }>>;
  audit(accountId?: string): Promise<LedgerAudit>;
  /** Sum of positive ledger entries (credits) and of negative ones (charges, corrections) of an account. */
  creditTotals(accountId: string): Promise<{ creditedNano: NanoUsd; debitedNano: NanoUsd }>;
}

export interface LedgerCredit {
  entryId: string;
  accountId: string;
  kind: Exclude<LedgerEntryKind, 'usage'>;
  /** Signed amount (negative for corrections that take money away). */
  amountNano: NanoUsd;
  reason: string | null;
  createdAt: number;
  /** Refuse (BalanceLimitError, nothing written) when the balance would leave -max..max. */
  maxBalanceNano?: NanoUsd;
}

/** A credit would move the balance past its allowed maximum; nothing was written. */
export class BalanceLimitError extends Error {
  override name = 'BalanceLimitError';

  constructor(readonly balanceNano: NanoUsd, readonly maxBalanceNano: NanoUsd) {
    super('the balance would pass its maximum');
  }
}

export interface LedgerRepository {
  /** Inserts the entry and moves the account balance in one transaction; returns the new balance (null: no such account). */
  applyCredit(credit: LedgerCredit): Promise<NanoUsd | null>;
  /**
   * Settles many usage charges in one transaction: one `usage` entry each (amount = -costNano), account balances
   * lowered by the sum per account, keys' `spentNano` raised by the sum per key. Idempotent per `entryId`.
   */
  settleCharges(charges: UsageCharge[]): Promise<void>;
  /** Oldest first unless `filter.order` is `desc`; `after` is the id of the previous page's last entry either way. */
  listByAccount(accountId: string, page: PageRequest, filter?: LedgerListFilter): Promise<Page<LedgerEntry>>;
  /** Sum of all entries of the account (the balance derived from the ledger); with `before`, of those created before it. */
  sumByAccount(accountId: string, before?: number): Promise<NanoUsd>;
  /** The account's `usage` entries in `from <= created_at < to` summed per UTC day, days ascending. */
  dailyUsage(accountId: string, from: number, to: number): Promise<LedgerDailyUsage[]>;
}

export interface LedgerListFilter {
  order?: 'asc' | 'desc';
  /** Only these kinds. */
  kinds?: readonly string[];
  /** None of these kinds. */
  excludeKinds?: readonly string[];
  /** Created at or after (epoch ms). */
  from?: number;
  /** Created before (epoch ms). */
  to?: number;
}

export interface LedgerDailyUsage {
  /** Start of the UTC day, epoch ms. */
  day: number;
  /** Usage entries (settled requests) of the day. */
  entries: number;
  /** Sum of their amounts (zero or negative). */
  amountNano: NanoUsd;
  /** What the day's requests cost beyond what their funds covered (recorded, not taken). */
  shortfallNano: NanoUsd;
  /** The newest entry of the day (epoch ms). */
  lastAt: number;
}
