import { z } from 'zod';
import { validateIpRange } from '../auth/ip-ranges.js';
import { nanoToUsd } from '../billing/money.js';
import type { Account, ApiKey, NanoUsd } from '../storage/records.js';
import type { AccountPatch, ApiKeyPatch } from '../storage/storage.js';
import { nonNegativeUsdInput, usdInput } from './money-input.js';
import { isoTime, timeInput } from './time-input.js';
import { limitInput } from './limit-input.js';

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

const keyAttributes = {
  name: z.string().max(100).optional(),
  quota_usd: nonNegativeUsdInput.nullable().optional(),
  allowed_models: z.array(z.string().min(1)).max(10_000).nullable().optional(),
  ip_allowlist: ipList.nullable().optional(),
  expires_at: timeInput.nullable().optional(),
  rpm: limitInput,
  tpm: limitInput,
  concurrency: limitInput,
};

export const createKeySchema = z.object({ ...keyAttributes, form: z.enum(['sk', 'brand']).optional() }).strict();
export const updateKeySchema = z.object({ ...keyAttributes, status: z.enum(['enabled', 'disabled', 'revoked']).optional() }).strict();

export type CreateKeyInput = z.infer<typeof createKeySchema>;
export type UpdateKeyInput = z.infer<typeof updateKeySchema>;

export function keyPatchFromInput(input: UpdateKeyInput): ApiKeyPatch {
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
  return patch;
}

export type EffectiveKeyState = 'enabled' | 'disabled' | 'revoked' | 'expired' | 'paused';

/** Spec part 3: the stored status plus what time and spend make of it. */
export function effectiveKeyState(key: ApiKey, spentNano: NanoUsd, now: number): EffectiveKeyState {
  if (key.status === 'revoked') return 'revoked';
  if (key.expiresAt !== null && key.expiresAt <= now) return 'expired';
  if (key.status === 'disabled') return 'disabled';
  if (key.quotaNano !== null && spentNano >= key.quotaNano) return 'paused';
  return 'enabled';
}

export function keyToJson(key: ApiKey, spentNano: NanoUsd, now: number): Record<string, unknown> {
  return {
    id: key.id,
    object: 'api_key',
    account_id: key.accountId,
    name: key.name,
    hint: key.displayHint,
    status: effectiveKeyState(key, spentNano, now),
    quota_usd: key.quotaNano === null ? null : nanoToUsd(key.quotaNano),
    spent_usd: nanoToUsd(spentNano),
    allowed_models: key.allowedModels,
    ip_allowlist: key.ipAllowlist,
    expires_at: isoTime(key.expiresAt),
    rpm: key.rpm,
    tpm: key.tpm,
    concurrency: key.concurrency,
    created_at: isoTime(key.createdAt),
    updated_at: isoTime(key.updatedAt),
  };
}

export function accountPatchFromInput(input: z.infer<typeof updateAccountSchema>, passwordHash: string | undefined): AccountPatch {
  const patch: AccountPatch = {};
  if (input.email !== undefined) patch.email = input.email;
  if (passwordHash !== undefined) patch.passwordHash = passwordHash;
  if (input.tier !== undefined) patch.tier = input.tier;
  if (input.credit_line_usd !== undefined) patch.creditLineNano = input.credit_line_usd;
  if (input.alert_balance_usd !== undefined) patch.alertBalanceNano = input.alert_balance_usd;
  return patch;
}

export function accountToJson(account: Account, availableNano: NanoUsd): Record<string, unknown> {
  return {
    id: account.id,
    object: 'account',
    email: account.email,
    tier: account.tier,
    balance_usd: nanoToUsd(availableNano),
    credit_line_usd: nanoToUsd(account.creditLineNano),
    alert_balance_usd: account.alertBalanceNano === null ? null : nanoToUsd(account.alertBalanceNano),
    has_password: account.passwordHash !== null,
    created_at: isoTime(account.createdAt),
    updated_at: isoTime(account.updatedAt),
  };
}
