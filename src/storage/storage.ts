import type { GuardrailRepository } from '../domain/guardrail-records.js';
import type { SignUpCreditRepository } from './repositories/sign-up-credit-repository.js';
import type { MemberRepository } from './repositories/member-repository.js';
import type { Account, Announcement, ApiKey, Channel, ChannelKeyFlag, FxRates, NanoUsd, Page, PageRequest, Plan, Subscription, Tier } from '../domain/records.js';
import type { Model } from '../domain/model-records.js';
import type { UsageLogRow, UsageQuery } from '../domain/usage-records.js';
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
import type { McpServerRepository } from './repositories/mcp-server-repository.js';
import type { McpPolicyRepository } from './repositories/mcp-policy-repository.js';
import type { McpSessionRepository } from './repositories/mcp-session-repository.js';
import type { ProjectRepository } from '../domain/project.js';
import type { WebhookEventDraft } from '../domain/webhook-events.js';
import type { SsoRepository } from './repositories/sso-repository.js';
import type { ScimRepository } from './repositories/scim-repository.js';
import type { LedgerRepository, MoneyRepository } from './money-contracts.js';
import type { FileContentStore, FileRepository, FileUploadRepository } from '../domain/files.js';
import type { BatchRepository } from '../domain/batches.js';
import type { ProviderBatchRepository } from '../domain/provider-batches.js';

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
  /** Upstream MCP servers of the MCP gateway, their headers sealed. */
  mcpServers: McpServerRepository;
  /** Accounts', projects' and keys' MCP allowlists, tool rules and limit overrides. */
  mcpPolicies: McpPolicyRepository;
  /** Client sessions of the MCP gateway (`Mcp-Session-Id`), shared by every instance on the database. */
  mcpSessions: McpSessionRepository;
  /** Projects inside accounts: their limits, spend and members. */
  projects: ProjectRepository;
  /** End-customer rules and the daily usage rollups by key, customer and tag (migration 0032). */
  customers: CustomerRepository;
  /** Uploaded and batch-written files (migration 0037); their bytes are kept by `fileContents`. */
  files: FileRepository;
  /** File bytes kept in the database. */
  fileContents: FileContentStore;
  /** Resumable uploads not finished yet, and their chunks (migration 0053). */
  fileUploads: FileUploadRepository;
  /** Batch jobs and their durable queue of lines (migration 0037). */
  batches: BatchRepository;
  /** Batches a provider's own batch API runs (migration 0045). */
  providerBatches: ProviderBatchRepository;
  /** Single sign-on connections, the identities they sign in and the sign-ins under way. */
  sso: SsoRepository;
  /** What accounts' SCIM directories provisioned: users, groups and the memberships they decide. */
  scim: ScimRepository;
  /** Guardrail policies and the models, accounts and keys they are bound to (migration 0036). */
  guardrails: GuardrailRepository;
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
  /** The accounts of these ids that exist, in id order (one statement for hundreds). */
  getByIds(ids: readonly string[]): Promise<Account[]>;
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
  'name' | 'status' | 'quotaNano' | 'allowedModels' | 'ipAllowlist' | 'expiresAt' | 'rpm' | 'tpm' | 'concurrency' | 'environment' | 'budget' | 'allowedOrigins' | 'projectId' | 'allowedMcpServers'>> & {
  /** The budget keeps its period: only its limit is written, so spend settled meanwhile is not overwritten. */
  budgetLimitOnly?: boolean;
};

export interface ApiKeyRepository {
  create(key: ApiKey): Promise<void>;
  getById(id: string): Promise<ApiKey | null>;
  /** The keys of these ids that exist, in id order (one statement for hundreds). */
  getByIds(ids: readonly string[]): Promise<ApiKey[]>;
  getBySecretHash(secretHash: string): Promise<ApiKey | null>;
  /** Ids and secret hashes of every key (revoked ones too) with an id above `afterId`, in id order, at most `limit`. */
  listSecretHashes(afterId: string | null, limit: number): Promise<Array<{ id: string; secretHash: string }>>;
  /** `playground: false` leaves out the console playground's short-lived keys. */
  listByAccount(accountId: string, page: PageRequest, options?: { playground?: false }): Promise<Page<ApiKey>>;
  /**
   * Changes a key. `eventOf`, given, names the webhook event the change calls for (from the key before and after it),
   * stored in the change's own transaction.
   */
  update(id: string, patch: ApiKeyPatch, now: number, eventOf?: (before: ApiKey, after: ApiKey) => WebhookEventDraft | null): Promise<ApiKey | null>;
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

export type {
  BudgetRollover, LedgerAudit, LedgerCredit, LedgerDailyUsage, LedgerListFilter, LedgerRepository, MoneyHold, MoneyRepository, MoneySnapshot,
  MoneySnapshotRequest, MoneyTransaction, MoneyWrites, ProjectBudgetRollover, SettledUsage, StoredCheckpoint, SubscriptionRollover,
} from './money-contracts.js';
export { BalanceLimitError } from './money-contracts.js';

export interface SubscriptionRepository {
  create(subscription: Subscription): Promise<void>;
  getById(id: string): Promise<Subscription | null>;
  listByAccount(accountId: string): Promise<Subscription[]>;
  update(id: string, patch: SubscriptionPatch, now: number): Promise<Subscription | null>;
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
