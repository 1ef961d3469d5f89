/** The console API's shapes (docs/console-api.md). */

export interface User {
  id: string;
  email: string;
  email_verified: boolean;
  two_factor_enabled: boolean;
  created_at: string;
}

/** The sign-up credit as its owner sees it (null: none given and none to come). */
export interface SignUpCredit {
  state: 'offered' | 'granted' | 'expired' | 'not_given';
  amount_usd?: number;
  days?: number | null;
  granted_at?: string;
  expires_at?: string | null;
  taken_back_usd?: number;
  reason?: string;
}

export interface Account {
  id: string;
  email: string;
  balance_usd: number;
  tier: string;
  status: string;
  sign_up_credit?: SignUpCredit | null;
}

export type OperatorRole = 'owner' | 'admin' | 'support' | 'viewer';
export type OperatorPermission = 'read' | 'write' | 'support:reply' | 'operators:manage';

/** The signed-in user's standing as an operator of the whole gateway (null in the session for everyone else). */
export interface OperatorStanding {
  role: OperatorRole;
  /** An owner disabled this operator: no operator route answers them. */
  disabled: boolean;
  two_factor_required: boolean;
  permissions: OperatorPermission[];
}

export interface Session {
  user: User | null;
  account: Account | null;
  role: string | null;
  operator: OperatorStanding | null;
  csrf_token: string;
}

export interface ConsoleConfig {
  api_base_url: string;
  console_url: string;
  product_name: string;
  mail_configured: boolean;
  features: { sign_up: boolean };
}

export type SignInResult =
  | { status: 'signed_in'; user: User; account: Account; csrf_token: string }
  | { status: 'two_factor_required'; challenge: string };

export interface SessionRow {
  id: string;
  device: string;
  ip: string;
  created_at: string;
  last_seen_at: string;
  current: boolean;
}

export type KeyStatus = 'enabled' | 'disabled' | 'revoked' | 'expired' | 'paused';
export type BudgetPeriod = 'day' | 'week' | 'month';

/** What a key may spend in each UTC day, week (from Monday) or month; `spent_usd` is this period's. */
export interface KeyBudget {
  period: BudgetPeriod;
  limit_usd: number;
  spent_usd: number;
  resets_at: string;
}

export interface ApiKey {
  id: string;
  name: string;
  environment: string | null;
  status: KeyStatus;
  hint: string;
  quota_usd: number | null;
  spent_usd: number;
  allowed_models: string[] | null;
  ip_allowlist: string[] | null;
  expires_at: string | null;
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  budget: KeyBudget | null;
  allowed_origins: string[] | null;
  /** Present exactly when `allowed_origins` is set: why a key usable from browsers is a risk. */
  allowed_origins_warning?: string;
  created_at: string;
  created_by: string | null;
  /** The key's project; null: the account's default project. */
  project_id: string | null;
}

/** A project of the account: a group of keys with its own budget, limits, allowlist and members. */
export interface Project {
  id: string;
  name: string;
  /** The account's default project: keys without a project, no limits of its own. */
  default: boolean;
  status: 'enabled' | 'paused';
  quota_usd: number | null;
  spent_usd: number;
  held_usd: number;
  budget: (KeyBudget & { held_usd: number }) | null;
  rpm: number | null;
  tpm: number | null;
  allowed_models: string[] | null;
  key_count: number;
  /** The caller's project role (scoped members) or account role. */
  your_role: string | null;
  created_at: string | null;
  updated_at: string | null;
}

export type ProjectRole = 'developer' | 'viewer';

export interface ProjectMember {
  project_id: string;
  user_id: string;
  email: string | null;
  role: ProjectRole;
  created_at: string;
}

/** A project's attributes on create and edit; null clears one. */
export interface ProjectInput {
  name: string;
  quota_usd: number | null;
  budget: { period: BudgetPeriod; limit_usd: number } | null;
  rpm: number | null;
  tpm: number | null;
  allowed_models: string[] | null;
}

/** The attributes a key is created or edited with; null clears an attribute on edit. */
export interface KeyInput {
  name: string;
  environment: string | null;
  quota_usd: number | null;
  allowed_models: string[] | null;
  ip_allowlist: string[] | null;
  expires_at: string | null;
  rpm: number | null;
  tpm: number | null;
  concurrency: number | null;
  budget: { period: BudgetPeriod; limit_usd: number } | null;
  allowed_origins: string[] | null;
  /** A project id, or `default`. */
  project_id: string;
}

export interface CatalogModel {
  id: string;
  kind: string;
  owned_by: string;
  pricing: Record<string, number> | null;
  aliases?: string[];
  context_window?: number | null;
  max_output_tokens?: number | null;
  capabilities?: { tools: boolean; vision: boolean; json_schema: boolean; reasoning: boolean } | null;
  /** The account's keys that may call the model (roles that read keys). */
  keys?: { id: string; name: string }[];
}

export interface Overview {
  balance_usd: number;
  subscriptions: { plan: string; period_end: string; remaining_usd: number }[];
  spend_today_usd: number;
  requests_today: number;
}

export interface UsageRow {
  request_id: string;
  key_id: string | null;
  /** The key's name (`Playground` for the playground's own keys); null when the key is gone. */
  key_name?: string | null;
  model: string | null;
  endpoint: string;
  protocol: string;
  stream: boolean;
  status: number;
  error_code: string | null;
  /** Answered from the response cache (no upstream call; billed at the model's hit price). */
  cache_hit: boolean;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  total_tokens: number | null;
  cost_usd: number | null;
  /** Calls of tools the upstream runs and bills per call, and their cost (part of cost_usd). */
  web_searches: number;
  web_fetches: number;
  file_searches: number;
  hosted_tool_cost_usd: number;
  latency_ms: number | null;
  ttfb_ms: number | null;
  created_at: string;
}

export interface DailyUsage {
  date: string;
  model: string;
  key_id: string | null;
  /** `Playground` for the playground's own keys. */
  key_name?: string | null;
  requests: number;
  errors: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

export interface PlaygroundSummary {
  request_id: string;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
  latency_ms: number;
  first_token_ms: number | null;
  /** The JSON body the console sent to the gateway's /v1/chat/completions for this answer (no key). */
  request_body?: Record<string, unknown>;
}
