import { issueApiKey } from '../auth/api-key-format.js';
import type { KeyVerifier } from '../auth/key-verifier.js';
import { newId } from '../shared/ids.js';
import type { ApiKey } from '../domain/records.js';
import type { Storage } from '../storage/storage.js';
import { budgetFromInput, type CreateKeyInput } from './account-input.js';
import { keyProjectFromInput } from '../projects/project-management.js';

export interface KeyCreation {
  storage: Storage;
  keys: KeyVerifier;
  keyBrand: string;
}

/**
 * Issues and stores a new key of an account from validated input, for the admin API and the console alike.
 * Returns the key and its plaintext secret, which is shown once and never stored.
 */
export async function createKey(dependencies: KeyCreation, accountId: string, input: CreateKeyInput, createdBy: string | null, now: number): Promise<{ key: ApiKey; plaintext: string }> {
  const projectId = (await keyProjectFromInput(dependencies.storage, accountId, input.project_id)) ?? null;
  const issued = issueApiKey(input.form ?? 'sk', dependencies.keyBrand);
  const key: ApiKey = {
    id: newId('key', now),
    accountId,
    name: input.name ?? '',
    secretHash: issued.secretHash,
    displayHint: issued.displayHint,
    status: 'enabled',
    quotaNano: input.quota_usd ?? null,
    spentNano: 0n,
    allowedModels: input.allowed_models ?? null,
    ipAllowlist: input.ip_allowlist ?? null,
    expiresAt: input.expires_at ?? null,
    rpm: input.rpm ?? null,
    tpm: input.tpm ?? null,
    concurrency: input.concurrency ?? null,
    budget: budgetFromInput(input.budget ?? null, null, now),
    allowedOrigins: input.allowed_origins ?? null,
    allowedMcpServers: input.allowed_mcp_servers ?? null,
    createdAt: now,
    updatedAt: now,
    environment: input.environment ?? null,
    createdBy,
    playground: false,
    projectId,
  };
  await dependencies.storage.keys.create(key);
  dependencies.keys.issued.add(key.secretHash);
  // Browser preflights of every instance ask storage again for an origin this key lists.
  if (key.allowedOrigins !== null) await dependencies.keys.invalidateKey(key.id);
  return { key, plaintext: issued.plaintext };
}
