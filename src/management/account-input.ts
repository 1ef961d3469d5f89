import { z } from 'zod';
import type { AdminAccountJson } from '../contract/operator.js';
import { validateIpRange } from '../auth/ip-ranges.js';
import { budgetPeriodAt, budgetSpentAt } from '../domain/budget-period.js';
import type { KeyHolds } from '../billing/ledger-requests.js';
import { nanoToUsd } from '../billing/money.js';
import type { EffectiveAccountLimits, EffectiveLimit } from '../limits/account-limits.js';
import type { Account, AccountStatus, ApiKey, KeyBudget, NanoUsd } from '../domain/records.js';
import type { AccountPatch, ApiKeyPatch } from '../storage/storage.js';
import { nonNegativeUsdInput, usdInput } from './money-input.js';
import { isoTime, timeInput } from './time-input.js';
import { limitInput } from './limit-input.js';
import type { ApiKeyJson } from '../contract/keys.js';

const email = z.email().max(254).transform((value) => value.toLowerCase());
const password = z.string().min(8).max(200);
const tier = z.string().min(1).max(50).regex(/^[a-z0-9_-]+$/);

export const createAccountSchema = z.object({ email, password: password.optional(), tier: tier.optional() }).strict();

export const updateAccountSchema = z.object({
  email: email.optional(),
  password: password.optional(),
  tier: tier.optional(),
  credit_line_usd: nonNegativeUsdInput.optional(),
  alert_balance_usd: nonNegativeUsdInput.nullable().optional(),
  alert_quota_percent: z.number().int().min(1).max(100).nullable().optional(),
  status: z.enum(['enabled', 'disabled']).optional(),
  rpm: z.number().int().positive().nullable().optional(),
  tpm: z.number().int().positive().nullable().optional(),
  concurrency: z.number().int().positive().nullable().optional(),
}).strict();

export const creditSchema = z.object({
  amount_usd: usdInput.refine((nano) => nano !== 0n, 'must not be zero'),
  reason: z.string().max(500).optional(),
}).strict();

const ipList = z.array(z.string()).max(1000).superRefine((entries, context) => {
  for (const entry of entries) {
    const problem = validateIpRange(entry);
    if (problem !== null) context.addIssue({ code: 'custom', message: problem });
  }
});

/** A browser origin exactly as browsers send it: scheme, host and optional port, nothing else. */
const originInput = z.string().max(300).refine((text) => {
  try {
    const url = new URL(text);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === text;
  } catch {
    return false;
  }
}, 'must be an origin such as https://app.example.com (scheme, host and optional port; no path or trailing slash)');

const keyAttributes = {
  name: z.string().max(100).optional(),
  quota_usd: nonNegativeUsdInput.nullable().optional(),
  allowed_models: z.array(z.string().min(1)).max(10_000).nullable().optional(),
  ip_allowlist: ipList.nullable().optional(),
  expires_at: timeInput.nullable().optional(),
  rpm: limitInput,
  tpm: limitInput,
  concurrency: limitInput,
  environment: z.string().trim().min(1).max(50).nullable().optional(),
  budget: z.object({
    period: z.enum(['day', 'week', 'month']),
    limit_usd: nonNegativeUsdInput,
  }).strict().nullable().optional(),
  allowed_origins: z.array(originInput).max(100).nullable().optional(),
  /** MCP server names the key may use: null, every public server; []: none. */
  allowed_mcp_servers: z.array(z.string().min(1).max(64)).max(1_000).nullable().optional(),
  /** The key's project: a project id of the key's account; `default` or null: the default project. */
  project_id: z.string().min(1).max(100).nullable().optional(),
};

export const createKeySchema = z.object({ ...keyAttributes, form: z.enum(['sk', 'brand']).optional() }).strict();
export const updateKeySchema = z.object({ ...keyAttributes, status: z.enum(['enabled', 'disabled', 'revoked']).optional() }).strict();

export type CreateKeyInput = z.infer<typeof createKeySchema>;
export type UpdateKeyInput = z.infer<typeof updateKeySchema>;

/**
 * The budget a key gets from input at `now`: a new budget, or one whose period changes, starts the current period
 * from zero; changing only the limit keeps what the period has spent.
 */
export function budgetFromInput(input: { period: KeyBudget['period']; limit_usd: NanoUsd } | null, existing: KeyBudget | null, now: number): KeyBudget | null {
  if (input === null) return null;
  if (existing !== null && existing.period === input.period) {
    return { period: input.period, limitNano: input.limit_usd, spentNano: budgetSpentAt(existing, now), periodStart: budgetPeriodAt(input.period, now).start };
  }
  return { period: input.period, limitNano: input.limit_usd, spentNano: 0n, periodStart: budgetPeriodAt(input.period, now).start };
}

export function keyPatchFromInput(input: UpdateKeyInput, existing: ApiKey, now: number): ApiKeyPatch {
  const patch: ApiKeyPatch = {};
  if (input.name !== undefined) patch.name = input.name;
  if (input.status !== undefined) patch.status = input.status;
  if (input.quota_usd !== undefined) patch.quotaNano = input.quota_usd;
  if (input.allowed_models !== undefined) patch.allowedModels = input.allowed_models;
  if (input.ip_allowlist !== undefined) patch.ipAllowlist = input.ip_allowlist;
  if (input.expires_at !== undefined) patch.expiresAt = input.expires_at;
  if (input.rpm !== undefined) patch.rpm = input.rpm;
  if (input.tpm !== undefined) patch.tpm = input.tpm;
  if (input.concurrency !== undefined) patch.concurrency = input.concurrency;
  if (input.environment !== undefined) patch.environment = input.environment;
  if (input.budget !== undefined) {
    patch.budget = budgetFromInput(input.budget, existing.budget, now);
    if (input.budget !== null && existing.budget?.period === input.budget.period) patch.budgetLimitOnly = true;
  }
  if (input.allowed_origins !== undefined) patch.allowedOrigins = input.allowed_origins;
  if (input.allowed_mcp_servers !== undefined) patch.allowedMcpServers = input.allowed_mcp_servers;
  return patch;
}

export type EffectiveKeyState = 'enabled' | 'disabled' | 'revoked' | 'expired' | 'paused';

/**
 * What the money side knows of a key beyond its row: amounts held from its quota cap and from its budget by requests
 * in flight (on every instance), which no other request can use; and its account's status.
 */
export interface KeyStanding extends KeyHolds {
  accountStatus: AccountStatus;
}

/** A key just created: nothing held, its account enabled. */
export const FRESH_KEY_STANDING: KeyStanding = { capHeldNano: 0n, budgetHeldNano: 0n, accountStatus: 'enabled' };

/**
 * The stored status plus what time, spend and the account make of it, as admission decides: `revoked` and `expired`
 * keys answer 401, `disabled` ones (or any key of a disabled account) 403; a key is `paused` (429 `quota_exhausted`)
 * while its quota cap or its period budget has nothing left once spend and the amounts held for requests in flight
 * are counted — a budget until its period resets.
 */
export function effectiveKeyState(key: ApiKey, standing: KeyStanding, now: number): EffectiveKeyState {
  if (key.status === 'revoked' || standing.accountStatus === 'deleted') return 'revoked';
  if (key.expiresAt !== null && key.expiresAt <= now) return 'expired';
  if (key.status === 'disabled' || standing.accountStatus === 'disabled') return 'disabled';
  if (key.quotaNano !== null && key.spentNano + standing.capHeldNano >= key.quotaNano) return 'paused';
  if (key.budget !== null && budgetSpentAt(key.budget, now) + standing.budgetHeldNano >= key.budget.limitNano) return 'paused';
  return 'enabled';
}

function budgetToJson(budget: KeyBudget | null, now: number): ApiKeyJson['budget'] {
  if (budget === null) return null;
  return {
    period: budget.period,
    limit_usd: nanoToUsd(budget.limitNano),
    spent_usd: nanoToUsd(budgetSpentAt(budget, now)),
    resets_at: isoTime(budgetPeriodAt(budget.period, now).end),
  };
}

/** The one JSON view of a key (admin API and console). `key` must be read after the ledger flushed its settlements. */
export function keyToJson(key: ApiKey, standing: KeyStanding, now: number): ApiKeyJson {
  return {
    id: key.id,
    object: 'api_key',
    account_id: key.accountId,
    name: key.name,
    hint: key.displayHint,
    status: effectiveKeyState(key, standing, now),
    quota_usd: key.quotaNano === null ? null : nanoToUsd(key.quotaNano),
    spent_usd: nanoToUsd(key.spentNano),
    held_usd: nanoToUsd(standing.capHeldNano > standing.budgetHeldNano ? standing.capHeldNano : standing.budgetHeldNano),
    budget: budgetToJson(key.budget, now),
    allowed_models: key.allowedModels,
    ip_allowlist: key.ipAllowlist,
    allowed_origins: key.allowedOrigins,
    allowed_mcp_servers: key.allowedMcpServers ?? null,
    ...(key.allowedOrigins === null ? {} : { allowed_origins_warning: BROWSER_ACCESS_WARNING }),
    expires_at: isoTime(key.expiresAt),
    rpm: key.rpm,
    tpm: key.tpm,
    concurrency: key.concurrency,
    environment: key.environment,
    project_id: key.projectId ?? null,
    created_by: key.createdBy,
    created_at: isoTime(key.createdAt),
    updated_at: isoTime(key.updatedAt),
  };
}

/** A new account as the admin API and the console's sign-up both create it: no money, the default tier unless named. */
export function newAccountRecord(id: string, email: string, passwordHash: string | null, tier: string | undefined, now: number): Account {
  return {
    id,
    email,
    passwordHash,
    tier: tier ?? 'default',
    balanceNano: 0n,
    creditLineNano: 0n,
    alertBalanceNano: null,
    status: 'enabled',
    rpm: null,
    tpm: null,
    concurrency: null,
    deletedAt: null,
    createdAt: now,
    updatedAt: now,
  };
}

export const BROWSER_ACCESS_WARNING = 'Browsers on these origins may call the API with this key, so anyone who can read the page can copy the key. Keep keys on a server unless the key is meant to be public (tight quota, budget and model allowlist).';

export function accountPatchFromInput(input: z.infer<typeof updateAccountSchema>, passwordHash: string | undefined): AccountPatch {
  const patch: AccountPatch = {};
  if (input.email !== undefined) patch.email = input.email;
  if (passwordHash !== undefined) patch.passwordHash = passwordHash;
  if (input.tier !== undefined) patch.tier = input.tier;
  if (input.credit_line_usd !== undefined) patch.creditLineNano = input.credit_line_usd;
  if (input.alert_balance_usd !== undefined) patch.alertBalanceNano = input.alert_balance_usd;
  if (input.status !== undefined) patch.status = input.status;
  if (input.rpm !== undefined) patch.rpm = input.rpm;
  if (input.tpm !== undefined) patch.tpm = input.tpm;
  if (input.concurrency !== undefined) patch.concurrency = input.concurrency;
  return patch;
}

function limitToJson(limit: EffectiveLimit): AdminAccountJson['effective_limits']['rpm'] {
  return { value: limit.value, source: limit.source };
}

export function accountToJson(account: Account, availableNano: NanoUsd, limits: EffectiveAccountLimits): AdminAccountJson {
  return {
    id: account.id,
    object: 'account',
    email: account.email,
    status: account.status,
    deleted_at: isoTime(account.deletedAt),
    tier: account.tier,
    rpm: account.rpm,
    tpm: account.tpm,
    concurrency: account.concurrency,
    effective_limits: { rpm: limitToJson(limits.rpm), tpm: limitToJson(limits.tpm), concurrency: limitToJson(limits.concurrency) },
    balance_usd: nanoToUsd(availableNano),
    credit_line_usd: nanoToUsd(account.creditLineNano),
    alert_balance_usd: account.alertBalanceNano === null ? null : nanoToUsd(account.alertBalanceNano),
    has_password: account.passwordHash !== null,
    created_at: isoTime(account.createdAt),
    updated_at: isoTime(account.updatedAt),
  };
}
