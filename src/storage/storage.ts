import type { SignUpCreditRepository } from './repositories/sign-up-credit-repository.js';
import type { MemberRepository } from './repositories/member-repository.js';
import type {
  Account, Announcement, ApiKey, Channel, ChannelKeyFlag, FxRates, KeyBudget, LedgerEntry, LedgerEntryKind, Model, NanoUsd, Page,
  PageRequest, Plan, Subscription, SubscriptionStatus, Tier, UsageCharge, UsageLogRow, UsageQuery,
} from '../domain/records.js';
// Alerts and redemption codes (their types live with their repositories).
import type { AlertRepository } from './repositories/alert-repository.js';
import type { CustomerRepository } from './repositories/customer-repository.js';
import type { RedemptionCodeRepository } from './repositories/redemption-repository.js';
import type { ConsoleRepository } from './repositories/console-repository.js';

// Card top-ups, invoices, referrals and support (their types live with their repositories).
import type { BillingProfileRepository } from './repositories/billing-profile-repository.js';
import type { InvoiceRepository } from './repositories/invoice-repository.js';
import type { PaymentRepository } from './repositories/payment-repository.js';
import type { ReferralRepository } from './repositories/referral-repository.js';
import type { SupportRepository } from './repositories/support-repository.js';
// The console's operators and their audit log (migration 0012).
import type { OperatorRepository } from './repositories/operator-repository.js';
import type { PlanPurchaseRepository } from './repositories/plan-purchase-repository.js';
import type { WebhookRepository } from './repositories/webhook-repository.js';
import type { ProjectRepository } from '../domain/project.js';
import type { SsoRepository } from './repositories/sso-repository.js';
import type { ScimRepository } from './repositories/scim-repository.js';

/**
 * The only door to the database. Every other module talks to these repositories; only `storage/` imports a
 * driver. Implementations exist for SQLite (Node's built-in node:sqlite) and PostgreSQL (pg), both through Kysely.
 * "Not found" is `null`, never a throw. Creation takes the full record (ids and timestamps are chosen by the caller).
 */
export interface Storage {
  readonly dialect: 'sqlite' | 'postgres';
  accounts: AccountRepository;
  keys: ApiKeyRepository;
  channels: ChannelRepository;
  models: ModelRepository;
  plans: PlanRepository;
  subscriptions: SubscriptionRepository;
  ledger: LedgerRepository;
  usage: UsageLogRepository;
  announcements: AnnouncementRepository;
  /** The currency each account's console shows amounts in. */
  displayCurrency: DisplayCurrencyRepository;
  fx: FxRepository;
  settings: SettingsRepository;
  tiers: TierRepository;
  channelKeyFlags: ChannelKeyFlagRepository;
  /** Reservations (holds per instance and pool), settlement of charges and the ledger check. */
  money: MoneyRepository;
  /** Alert thresholds and the crossings already claimed. */
  alerts: AlertRepository;
  /** Redemption codes, redeemed exactly once. */
  redemptionCodes: RedemptionCodeRepository;
  /** The web console's users, memberships, sessions and single-use tokens. */
  console: ConsoleRepository;
  /** An account's members and open invitations. */
  members: MemberRepository;

  /** Buyer details printed on invoices. */
  billingProfiles: BillingProfileRepository;
  /** Stripe Checkout Sessions and the webhook's all-or-nothing transaction (credit, invoice, reward). */
  payments: PaymentRepository;
  /** Invoices and credit notes with gap-free numbers per series. */
  invoices: InvoiceRepository;
  /** Plan periods bought from the balance in the console: payment, subscription and invoice in one transaction. */
  planPurchases: PlanPurchaseRepository;
  referrals: ReferralRepository;
  support: SupportRepository;
  /** The console's operators (deployment-wide roles) and the audit log of what they changed. */
  operators: OperatorRepository;
  /** Sign-up credits: the address of each console sign-up, the once-only claims, grants and their expiry. */
  signUpCredits: SignUpCreditRepository;
  /** Webhook endpoints, the outbox of events, their deliveries and log; where alerts go. */
  webhooks: WebhookRepository;
  /** Projects inside accounts: their limits, spend and members. */
  projects: ProjectRepository;
  /** End-customer rules and the daily usage rollups by key, customer and tag (migration 0032). */
  customers: CustomerRepository;
  /** Single sign-on connections, the identities they sign in and the sign-ins under way. */
  sso: SsoRepository;
  /** What accounts' SCIM directories provisioned: users, groups and the memberships they decide. */
  scim: ScimRepository;
  /** Cheap liveness query (`select 1`). */
  ping(): Promise<boolean>;
  /** Migrations this build knows that the database has not applied (empty when the schema is current). */
  pendingMigrations(): Promise<string[]>;
  close(): Promise<void>;
}

export type AccountPatch = Partial<Pick<Account, 'email' | 'passwordHash' | 'tier' | 'creditLineNano' | 'alertBalanceNano' | 'status' | 'rpm' | 'tpm' | 'concurrency' | 'deletedAt'>>;

export interface AccountRepository {
  create(account: Account): Promise<void>;
  getById(id: string): Promise<Account | null>;
  getByEmail(email: string): Promise<Account | null>;
  list(page: PageRequest): Promise<Page<Account>>;
  /** Accounts whose email, id or billing name starts with the text (case ignored), by id; `after` pages on. */
  search(text: string, page: PageRequest): Promise<Page<Account>>;
  update(id: string, patch: AccountPatch, now: number): Promise<Account | null>;
  /** Balances of many accounts in one query (for cache refresh). */
  getBalances(ids: string[]): Promise<Map<string, NanoUsd>>;
  /**
   * Deletes an account for good in one transaction, keeping what accounting needs: every key revoked, active
   * subscriptions cancelled, the email replaced by a pseudonym and the password, alert settings and other personal
   * data cleared; the row, its ledger entries and usage rows stay. Repeating it changes nothing more.
   */
  erase(id: string, now: number): Promise<Account | null>;
}

export type ApiKeyPatch = Partial<Pick<ApiKey,
  'name' | 'status' | 'quotaNano' | 'allowedModels' | 'ipAllowlist' | 'expiresAt' | 'rpm' | 'tpm' | 'concurrency' | 'environment' | 'budget' | 'allowedOrigins' | 'projectId'>> & {
  /** The budget keeps its period: only its limit is written, so spend settled meanwhile is not overwritten. */
  budgetLimitOnly?: boolean;
};

export interface ApiKeyRepository {
  create(key: ApiKey): Promise<void>;
  getById(id: string): Promise<ApiKey | null>;
  getBySecretHash(secretHash: string): Promise<ApiKey | null>;
  /** Ids and secret hashes of every key (revoked ones too) with an id above `afterId`, in id order, at most `limit`. */
  listSecretHashes(afterId: string | null, limit: number): Promise<Array<{ id: string; secretHash: string }>>;
  /** `playground: false` leaves out the console playground's short-lived keys. */
  listByAccount(accountId: string, page: PageRequest, options?: { playground?: false }): Promise<Page<ApiKey>>;
  update(id: string, patch: ApiKeyPatch, now: number): Promise<ApiKey | null>;
  /** Whether a key that is not revoked lists this browser origin (answers preflights, which carry no key). */
  anyAllowsOrigin(origin: string): Promise<boolean>;
}

export type ChannelPatch = Partial<Omit<Channel, 'id' | 'createdAt' | 'updatedAt'>>;

export interface ChannelRepository {
  create(channel: Channel): Promise<void>;
  getById(id: string): Promise<Channel | null>;
  getByName(name: string): Promise<Channel | null>;
  list(page: PageRequest): Promise<Page<Channel>>;
  /** Every channel, enabled or not (the routing snapshot). */
  listAll(): Promise<Channel[]>;
  update(id: string, patch: ChannelPatch, now: number): Promise<Channel | null>;
  delete(id: string): Promise<boolean>;
}

/** Upstream keys flagged as rejected, per channel (small: a few rows per channel at most). */
export interface ChannelKeyFlagRepository {
  /** Every flag (read with the routing snapshot). */
  listAll(): Promise<ChannelKeyFlag[]>;
  /** Adds a flag; a key already flagged keeps its first flag. */
  add(flag: ChannelKeyFlag): Promise<void>;
  /** Drops every flag of a channel (its keys were updated, or it was deleted). */
  clearChannel(channelId: string): Promise<void>;
}

export type ModelPatch = Partial<Omit<Model, 'id' | 'createdAt' | 'updatedAt'>>;

export interface ModelRepository {
  create(model: Model): Promise<void>;
  getById(id: string): Promise<Model | null>;
  list(page: PageRequest): Promise<Page<Model>>;
  listAll(): Promise<Model[]>;
  update(id: string, patch: ModelPatch, now: number): Promise<Model | null>;
  delete(id: string): Promise<boolean>;
}

export type PlanPatch = Partial<Omit<Plan, 'id' | 'createdAt' | 'updatedAt'>>;

export interface PlanRepository {
  create(plan: Plan): Promise<void>;
  getById(id: string): Promise<Plan | null>;
  getByName(name: string): Promise<Plan | null>;
  list(page: PageRequest): Promise<Page<Plan>>;
  update(id: string, patch: PlanPatch, now: number): Promise<Plan | null>;
}

export type TierPatch = Partial<Pick<Tier, 'rpm' | 'tpm' | 'signupCreditNano' | 'signupCreditDays'>>;

/** Tiers by name (the name is the key: accounts refer to it). */
export interface TierRepository {
  create(tier: Tier): Promise<void>;
  getByName(name: string): Promise<Tier | null>;
  /** By name, with an exclusive name cursor. */
  list(page: PageRequest): Promise<Page<Tier>>;
  /** Every tier (the limits snapshot; the table is small). */
  listAll(): Promise<Tier[]>;
  update(name: string, patch: TierPatch, now: number): Promise<Tier | null>;
  delete(name: string): Promise<boolean>;
}

export type SubscriptionPatch = Partial<Pick<Subscription, 'planId' | 'status' | 'startsAt' | 'currentPeriodStart' | 'currentPeriodEnd' | 'cancelAt' | 'paidThrough' | 'renews'>> & {
  /** Zero the period's used quota and overage (a new period starts). */
  resetUsage?: boolean;
};

export interface SubscriptionRepository {
  create(subscription: Subscription): Promise<void>;
  getById(id: string): Promise<Subscription | null>;
  listByAccount(accountId: string): Promise<Subscription[]>;
  update(id: string, patch: SubscriptionPatch, now: number): Promise<Subscription | null>;
}

/** What a money transaction reads about the pools it touches (every instance's holds summed). */
export interface MoneySnapshot {
  accounts: Map<string, { balanceNano: NanoUsd; creditLineNano: NanoUsd }>;
  keys: Map<string, { accountId: string; quotaNano: NanoUsd | null; spentNano: NanoUsd; budget: KeyBudget | null }>;
  subscriptions: Map<string, { subscription: Subscription; plan: Plan }>;
  /** Projects whose cap or budget takes part (absent: none asked for). */
  projects?: Map<string, { accountId: string; quotaNano: NanoUsd | null; spentNano: NanoUsd; budget: KeyBudget | null }>;
  /** The budget of each end-customer pool asked for (by pool id; absent: the customer has no budget). */
  customerBudgets?: Map<string, KeyBudget>;
  /** Sum over every instance of the holds on each pool asked for. */
  heldByPool: Map<string, NanoUsd>;
}

export interface MoneySnapshotRequest {
  accountIds: string[];
  keyIds: string[];
  subscriptionIds: string[];
  projectIds?: string[];
  pools: string[];
  /** End customers whose budgets the transaction reads. */
  customers?: Array<{ accountId: string; customer: string }>;
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

export interface UsageLogRepository {
  insertBatch(rows: UsageLogRow[]): Promise<void>;
  /** Newest first; the cursor is opaque. */
  query(filter: UsageQuery, page: PageRequest): Promise<Page<UsageLogRow>>;
  /** Per UTC day and model: requests, errors (status >= 400), tokens and cost; days ascending. */
  dailyTotals(filter: { accountId: string; from: number; to: number }): Promise<UsageDailyTotal[]>;
  /**
   * Deletes at most `limit` rows created before `before`, oldest first, in one statement. On PostgreSQL it runs
   * under a transaction-scoped advisory lock taken without waiting, so instances never prune at the same time:
   * null means another instance holds it. On SQLite the database's single writer serialises it. Never touches
   * the ledger.
   */
  pruneBatch(before: number, limit: number): Promise<number | null>;
}

export interface UsageDailyTotal {
  /** Start of the UTC day, epoch ms. */
  day: number;
  model: string | null;
  /** The key the requests were made with (null: rows written without one). */
  keyId: string | null;
  requests: number;
  errors: number;
  inputTokens: number;
  outputTokens: number;
  costNano: NanoUsd;
}

export interface AnnouncementRepository {
  create(announcement: Announcement): Promise<void>;
  /** Published at or before `now` and not expired, newest first. */
  listActive(now: number, limit: number): Promise<Announcement[]>;
  list(page: PageRequest): Promise<Page<Announcement>>;
  delete(id: string): Promise<boolean>;
  /** Records that the user dismissed the announcement (again: nothing changes). */
  dismiss(userId: string, announcementId: string, at: number): Promise<void>;
  /** Which of `announcementIds` the user dismissed. */
  dismissedBy(userId: string, announcementIds: readonly string[]): Promise<Set<string>>;
}

export interface DisplayCurrencyRepository {
  /** The account's chosen currency code; null: none chosen (USD). */
  get(accountId: string): Promise<string | null>;
  /** Sets it; null removes the choice. */
  set(accountId: string, currency: string | null, now: number): Promise<void>;
}

export interface FxRepository {
  get(): Promise<FxRates | null>;
  set(rates: FxRates): Promise<void>;
}

export interface SettingsRepository {
  get(key: string): Promise<string | null>;
  set(key: string, value: string, now: number): Promise<void>;
}
