import type { Project } from './project.js';

/**
 * Domain records as the rest of the gateway sees them. Money is always `bigint` nano-USD (1e-9 USD),
 * times are Unix epoch milliseconds (`number`), and optional attributes are `null` rather than absent.
 */

export type NanoUsd = bigint;

export interface Account {
  id: string;
  email: string;
  passwordHash: string | null;
  tier: string;
  balanceNano: NanoUsd;
  /** How far below zero the balance may go (0 = prepaid only). */
  creditLineNano: NanoUsd;
  /** Alert when the balance drops below this (null: no alert). */
  alertBalanceNano: NanoUsd | null;
  status: AccountStatus;
  /** Per-account limits overriding the tier's (null: the tier's; concurrency has no tier value, null is none). */
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  deletedAt: number | null;
  createdAt: number;
  updatedAt: number;
}

export type ApiKeyStatus = 'enabled' | 'disabled' | 'revoked';

/** `disabled`: every key refused, nothing deleted. `deleted`: keys revoked, personal data erased, accounting kept. */
export type AccountStatus = 'enabled' | 'disabled' | 'deleted';

export type BudgetPeriod = 'day' | 'week' | 'month';

/** A key's spend limit that starts again at each UTC day, week (from Monday) or month. */
export interface KeyBudget {
  period: BudgetPeriod;
  limitNano: NanoUsd;
  /** Spend settled in the period that starts at `periodStart` (an earlier period's spend counts for nothing now). */
  spentNano: NanoUsd;
  periodStart: number;
}

export interface ApiKey {
  id: string;
  accountId: string;
  name: string;
  /** SHA-256 of the full secret, lowercase hex. The secret itself is never stored. */
  secretHash: string;
  /** Safe to show: prefix plus the last four characters, e.g. `sk-…a1b2`. */
  displayHint: string;
  status: ApiKeyStatus;
  quotaNano: NanoUsd | null;
  spentNano: NanoUsd;
  allowedModels: string[] | null;
  ipAllowlist: string[] | null;
  expiresAt: number | null;
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  budget: KeyBudget | null;
  /** Browser origins (`https://app.example.com`) allowed to call with this key; null: no browser may. */
  allowedOrigins: string[] | null;
  /** Names of the MCP servers the key may use; null (or absent on records made before MCP): every public server. */
  allowedMcpServers?: string[] | null;
  createdAt: number;
  updatedAt: number;
  /** Free label such as `production`; null: none. */
  environment: string | null;
  /** The console user who created the key; null for admin API and CLI keys. */
  createdBy: string | null;
  /** A short-lived key minted by the console's playground: not listed, revoked after its call. */
  playground: boolean;
  /** The key's project; null (or absent on records made before projects): the account's default project. */
  projectId?: string | null;
  /**
   * The key's project as the key verifier loaded it with the key, for admission (its limits, allowlist and money
   * pools); absent on records read elsewhere.
   */
  project?: Project | null;
}

/**
 * A channel's upstream type, by name. Channels enter through the admin API, the console and gateway.yaml, whose input
 * schema (management/channel-input.ts) accepts only the types the registered upstreams declare; a stored channel whose
 * type no upstream serves (its upstream since removed) is listed but never routed.
 */
export type ChannelType = string;

export interface Channel {
  id: string;
  name: string;
  type: ChannelType;
  baseUrl: string | null;
  /** Upstream credentials in plaintext in memory; storage encrypts them at rest. One or more, used in rotation. */
  apiKeys: string[];
  /** Public model id → the upstream's own model name. */
  models: Record<string, string>;
  priority: number;
  weight: number;
  enabled: boolean;
  headers: Record<string, string>;
  /** Type-specific settings (azure api_version, simulator pacing, timeouts). */
  settings: Record<string, unknown>;
  createdAt: number;
  updatedAt: number;
}

/** An upstream key a channel's upstream rejected (401/403): out of the rotation until the channel is updated. */
export interface ChannelKeyFlag {
  channelId: string;
  /** First 16 hex characters of the key's SHA-256: names the key without storing it again. */
  keyFingerprint: string;
  /** Position of the key in the channel's `apiKeys` when it was flagged. */
  keyIndex: number;
  /** Why, e.g. `credential`. */
  reason: string;
  flaggedAt: number;
}

/** The tier every account starts on; it always exists (created by the migration, never deleted). */
export const DEFAULT_TIER = 'default';

/** Per-account limits (per-account RPM and TPM, summed over the account's keys), named by `Account.tier`. */
export interface Tier {
  name: string;
  /** Requests a minute for the whole account; null: unlimited. */
  rpm: number | null;
  /** Tokens a minute for the whole account; null: unlimited. */
  tpm: number | null;
  /** Credit a console sign-up of this tier gets when its email is verified; null: the gateway's SIGNUP_CREDIT_USD. */
  signupCreditNano: NanoUsd | null;
  /** Days the sign-up credit lasts before its unused part is taken back; null: the gateway's SIGNUP_CREDIT_DAYS. */
  signupCreditDays: number | null;
  createdAt: number;
  updatedAt: number;
}

export type PlanPeriod = 'day' | 'week' | 'month';
export type OveragePolicy = 'deny' | 'limit' | 'payg';

export interface Plan {
  id: string;
  name: string;
  period: PlanPeriod;
  quotaNano: NanoUsd;
  overagePolicy: OveragePolicy;
  overageLimitNano: NanoUsd | null;
  rpm: number | null;
  tpm: number | null;
  /** Accounts may subscribe to or change to the plan themselves in the console. */
  selfService: boolean;
  /** What one period costs when bought in the console, taken from the balance (0: free). */
  priceNano: NanoUsd;
  createdAt: number;
  updatedAt: number;
}

export type SubscriptionStatus = 'active' | 'cancelled';

export interface Subscription {
  id: string;
  accountId: string;
  planId: string;
  status: SubscriptionStatus;
  startsAt: number;
  currentPeriodStart: number;
  currentPeriodEnd: number;
  /** Settled spend of the current period (`currentPeriodStart`), paid from the plan's quota. */
  usedNano: NanoUsd;
  /** Overage the wallet paid in the current period (counted against the plan's limit under policy `limit`). */
  overageUsedNano: NanoUsd;
  /** When the subscription ends (a cancellation, immediate or at period end); null: it renews every period. */
  cancelAt: number | null;
  /** Bought in the console: the end of the last period paid, where it stops unless renewed. Null: an operator's grant. */
  paidThrough: number | null;
  /** The next period is bought from the balance when the paid one ends. */
  renews: boolean;
  createdAt: number;
  updatedAt: number;
}

/** `subscription`: a plan period bought from the balance in the console (negative). */
/** `signup_credit`: the credit a console sign-up gets once its email is verified, and its unused part taken back at expiry. */
export type LedgerEntryKind = 'topup' | 'usage' | 'refund' | 'correction' | 'referral' | 'subscription_grant' | 'subscription' | 'signup_credit';

export interface LedgerEntry {
  id: string;
  accountId: string;
  kind: LedgerEntryKind;
  /** Signed: credits are positive, charges negative. */
  amountNano: NanoUsd;
  keyId: string | null;
  requestId: string | null;
  reason: string | null;
  createdAt: number;
  /** Usage entries: what the request cost beyond what its funds could cover (not taken, recorded). */
  shortfallNano: NanoUsd;
}

export interface Announcement {
  id: string;
  title: string;
  body: string;
  level: 'info' | 'warning' | 'critical';
  publishedAt: number;
  expiresAt: number | null;
  createdAt: number;
}

export interface FxRates {
  base: 'USD';
  /** Currency code → decimal rate as a string, kept exact (e.g. "151.23"). */
  rates: Record<string, string>;
  asOf: number;
  source: string;
  updatedAt: number;
}

export interface Page<T> {
  data: T[];
  /** Pass as `after` to get the next page; null when this was the last page. */
  nextCursor: string | null;
}

export interface PageRequest {
  limit: number;
  /** Exclusive cursor: the id (or opaque cursor) of the last row of the previous page. */
  after?: string | null;
}
