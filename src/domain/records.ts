import type { HostedToolCalls } from '../ir/usage.js';
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

export type ModelKind = 'chat' | 'embedding' | 'image' | 'audio' | 'moderation' | 'rerank';

/** How a model's channels within one priority tier are ordered (src/routing/balancing-strategy.ts). */
export type BalancingStrategy = 'weighted' | 'least-latency' | 'least-in-flight';

export interface Pricing {
  inputPerMtokNano: NanoUsd | null;
  outputPerMtokNano: NanoUsd | null;
  cachedInputPerMtokNano: NanoUsd | null;
  /** Prompt-cache writes; unset: billed at the input price. */
  cacheWritePerMtokNano: NanoUsd | null;
  perRequestNano: NanoUsd | null;
  perImageNano: NanoUsd | null;
  perAudioMinuteNano: NanoUsd | null;
  perMcharNano: NanoUsd | null;
  /** Each web search an answer ran (OpenAI's and Anthropic's searches, Gemini 3's search queries). */
  perWebSearchNano: NanoUsd | null;
  /** Once for a request whose answer searched the web at all (Gemini 2.x bills Google Search grounding per prompt). */
  perGroundedPromptNano: NanoUsd | null;
  /** Each web fetch (Anthropic's web fetch tool). */
  perWebFetchNano: NanoUsd | null;
  /** Each file search call (OpenAI's file_search tool). */
  perFileSearchNano: NanoUsd | null;
  /** Each search unit of a rerank request (one query over up to 100 documents; see billing/search-units.ts). */
  perSearchUnitNano: NanoUsd | null;
  /** Input and output per million tokens for lines of a batch; unset: the normal price (billing/batch-pricing.ts). */
  batchInputPerMtokNano: NanoUsd | null;
  batchOutputPerMtokNano: NanoUsd | null;
  /** Audio input tokens (realtime sessions); unset: billed at the input price. */
  inputAudioPerMtokNano?: NanoUsd | null;
  /** Cached audio input tokens; unset: billed at the audio input price. */
  cachedAudioInputPerMtokNano?: NanoUsd | null;
  /** Audio output tokens; unset: billed at the output price. */
  outputAudioPerMtokNano?: NanoUsd | null;
  /**
   * Per image by quality and size, keyed `<quality> <size>` (`hd 1024x1792`) or `<size>` alone (bundled catalog only:
   * DALL·E bills so); an image of a variant not listed costs `perImageNano`. An operator's `perImageNano` replaces it.
   */
  perImageBySize?: Readonly<Record<string, NanoUsd>>;
  /**
   * Long-context prices (bundled catalog only): once the request's input passes `aboveInputTokens`, every token of
   * it is billed at the tier's rates. Ascending by threshold; the last one passed applies.
   */
  tiers?: readonly PriceTier[];
}

/** A model with no price set. */
export const NO_PRICES: Pricing = {
  inputPerMtokNano: null, outputPerMtokNano: null, cachedInputPerMtokNano: null, cacheWritePerMtokNano: null, perRequestNano: null, perImageNano: null,
  perAudioMinuteNano: null, perMcharNano: null, perWebSearchNano: null, perGroundedPromptNano: null, perWebFetchNano: null, perFileSearchNano: null, perSearchUnitNano: null,
  batchInputPerMtokNano: null, batchOutputPerMtokNano: null,
};

export interface PriceTier {
  aboveInputTokens: number;
  inputPerMtokNano: NanoUsd | null;
  outputPerMtokNano: NanoUsd | null;
  cachedInputPerMtokNano: NanoUsd | null;
  cacheWritePerMtokNano: NanoUsd | null;
}

/**
 * A model's response cache: answers to identical requests are kept `ttlSeconds` and replayed without an upstream
 * call, billed `hitPriceBasisPoints` / 10,000 of the original answer's cost. Entries are per account unless `shared`.
 */
export interface ModelCachePolicy {
  ttlSeconds: number;
  hitPriceBasisPoints: number;
  shared: boolean;
}

export interface Model {
  id: string;
  kind: ModelKind;
  public: boolean;
  /** Default upstream model name when a channel lists this model without its own mapping. */
  upstream: string | null;
  ownedBy: string;
  pricing: Pricing;
  rpm: number | null;
  tpm: number | null;
  /** Orders the model's channels within a priority tier. */
  routingStrategy: BalancingStrategy;
  /** The response cache; null: only requests that ask for it (`x-gateway-cache: on`) are cached, with the defaults. */
  cache: ModelCachePolicy | null;
  /**
   * Models tried in this order when this one cannot answer a chat request (every channel failed, the request is
   * over its context window, or the upstream refused it on content policy); ids or aliases, each tried at most once.
   */
  fallbacks: readonly string[];
  createdAt: number;
  updatedAt: number;
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

/** One request's charge, settled in a batch with others. */
export interface UsageCharge {
  entryId: string;
  accountId: string;
  keyId: string;
  requestId: string;
  /** Positive amount to take from the balance. */
  costNano: NanoUsd;
  createdAt: number;
}

/** Metadata only: no prompt, completion or tool-argument text, ever. */
export interface UsageLogRow {
  requestId: string;
  accountId: string | null;
  keyId: string | null;
  model: string | null;
  channelId: string | null;
  protocol: string;
  endpoint: string;
  stream: boolean;
  status: number;
  errorCode: string | null;
  promptTokens: number;
  completionTokens: number;
  cachedTokens: number;
  reasoningTokens: number;
  totalTokens: number;
  costNano: NanoUsd;
  latencyMs: number;
  ttfbMs: number | null;
  attempts: number;
  createdAt: number;
  /** The channels tried, in order (the last one is `channelId`); absent on rows older than the column. */
  attemptedChannels?: string[];
  /** Answered from the response cache (no upstream call); absent on rows older than the column. */
  cacheHit?: boolean;
  /** Calls of hosted tools the upstream bills per call; absent when none (and on rows older than the columns). */
  hostedTools?: HostedToolCalls;
  /** What those calls cost, part of `costNano`; absent when nothing. */
  hostedToolCostNano?: NanoUsd;
  /** The end customer the request named (bounded, see customers/request-identity.ts); absent or null: none. */
  customer?: string | null;
  /** The request's tags, `name: value` (bounded in count and length); absent or null: none. */
  tags?: Readonly<Record<string, string>> | null;
  /** What the request's guardrail policies did (names, outcomes, counts; never text); absent: none ran. */
  guardrails?: readonly GuardrailUsage[];
  /** An MCP tool call's facts (never its arguments or result, unless its server logs payloads); absent: not one. */
  mcp?: McpCallUsage;
}

/** What the usage row of one MCP tool call keeps. */
export interface McpCallUsage {
  server: string;
  tool: string;
  /** Bytes of the call's arguments as sent upstream, and of its result as returned (JSON text). */
  bytesIn: number;
  bytesOut: number;
  /** `{ arguments, result }` as JSON text (bounded), only for a server whose operator opted in to log payloads. */
  payload?: string;
}

/** One guardrail policy's part in a request, as its usage row keeps it. */
export interface GuardrailUsage {
  name: string;
  direction: 'input' | 'output';
  /** `unavailable`: an external guardrail gave no verdict and its policy fails open */
  outcome: 'passed' | 'logged' | 'masked' | 'blocked' | 'unavailable';
  count: number;
}

export interface UsageQuery {
  accountId?: string;
  keyId?: string;
  /** Any of these keys (an empty list matches nothing). */
  keyIds?: readonly string[];
  /** The channel that answered. */
  channelId?: string;
  model?: string;
  /** The end customer the requests named. */
  customer?: string;
  status?: number;
  from?: number;
  to?: number;
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
