import { sql, type Insertable, type Kysely, type Selectable, type Updateable } from 'kysely';
import {
  fromBoolean, parseNullableStringArray, toBigInt, toBoolean, toNullableBigInt, toNullableJson, toNullableNumber, toNumber, toOneOf,
} from '../convert.js';
import type { ApiKeysTable, Database } from '../database-schema.js';
import type { Dialect } from './ledger-repository.js';
import type { WebhookTables } from '../webhook-schema.js';
import { budgetChanges, budgetColumns, budgetOf } from './budget-columns.js';
import { tableAccess, type TableMapping } from './table-access.js';
import { insertWebhookEvent } from './webhook-repository.js';
import type { ApiKey, ApiKeyStatus } from '../../domain/records.js';
import type { ApiKeyPatch, ApiKeyRepository } from '../storage.js';

const STATUSES: readonly ApiKeyStatus[] = ['enabled', 'disabled', 'revoked'];

function toRecord(row: Selectable<ApiKeysTable>): ApiKey {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    secretHash: row.secret_hash,
    displayHint: row.display_hint,
    status: toOneOf(row.status, STATUSES, 'api key status'),
    quotaNano: toNullableBigInt(row.quota_nano),
    spentNano: toBigInt(row.spent_nano),
    allowedModels: parseNullableStringArray(row.allowed_models, 'api_keys.allowed_models'),
    ipAllowlist: parseNullableStringArray(row.ip_allowlist, 'api_keys.ip_allowlist'),
    expiresAt: toNullableNumber(row.expires_at),
    rpm: toNullableNumber(row.rpm),
    tpm: toNullableNumber(row.tpm),
    concurrency: toNullableNumber(row.concurrency),
    budget: budgetOf(row, 'api key budget period'),
    allowedOrigins: parseNullableStringArray(row.allowed_origins, 'api_keys.allowed_origins'),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
    environment: row.environment,
    createdBy: row.created_by,
    playground: toBoolean(row.playground),
    // Absent for the default project, as on records made before projects.
    ...(row.project_id === null ? {} : { projectId: row.project_id }),
    // Absent for every public server (null), as on records made before MCP.
    ...(row.allowed_mcp_servers === null || row.allowed_mcp_servers === undefined ? {} : { allowedMcpServers: parseNullableStringArray(row.allowed_mcp_servers, 'api_keys.allowed_mcp_servers') }),
  };
}

function toRow(key: ApiKey): Insertable<ApiKeysTable> {
  return {
    id: key.id,
    account_id: key.accountId,
    name: key.name,
    secret_hash: key.secretHash,
    display_hint: key.displayHint,
    status: key.status,
    quota_nano: key.quotaNano,
    spent_nano: key.spentNano,
    allowed_models: toNullableJson(key.allowedModels),
    ip_allowlist: toNullableJson(key.ipAllowlist),
    expires_at: key.expiresAt,
    rpm: key.rpm,
    tpm: key.tpm,
    concurrency: key.concurrency,
    ...budgetColumns(key.budget),
    allowed_origins: toNullableJson(key.allowedOrigins),
    allowed_mcp_servers: toNullableJson(key.allowedMcpServers ?? null),
    created_at: key.createdAt,
    updated_at: key.updatedAt,
    environment: key.environment,
    created_by: key.createdBy,
    playground: fromBoolean(key.playground),
    project_id: key.projectId ?? null,
  };
}

function toChanges(patch: ApiKeyPatch, now: number): Updateable<ApiKeysTable> {
  const changes: Updateable<ApiKeysTable> = { updated_at: now };
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.status !== undefined) changes.status = patch.status;
  if (patch.quotaNano !== undefined) changes.quota_nano = patch.quotaNano;
  if (patch.allowedModels !== undefined) changes.allowed_models = toNullableJson(patch.allowedModels);
  if (patch.ipAllowlist !== undefined) changes.ip_allowlist = toNullableJson(patch.ipAllowlist);
  if (patch.expiresAt !== undefined) changes.expires_at = patch.expiresAt;
  if (patch.rpm !== undefined) changes.rpm = patch.rpm;
  if (patch.tpm !== undefined) changes.tpm = patch.tpm;
  if (patch.concurrency !== undefined) changes.concurrency = patch.concurrency;
  if (patch.environment !== undefined) changes.environment = patch.environment;
  Object.assign(changes, budgetChanges(patch));
  if (patch.allowedOrigins !== undefined) changes.allowed_origins = toNullableJson(patch.allowedOrigins);
  if (patch.projectId !== undefined) changes.project_id = patch.projectId;
  if (patch.allowedMcpServers !== undefined) changes.allowed_mcp_servers = toNullableJson(patch.allowedMcpServers);
  return changes;
}

const API_KEYS: TableMapping<'api_keys', ApiKey, ApiKeyPatch> = {
  table: 'api_keys', key: 'id', keyOf: (key) => key.id, toRecord, toRow, toChanges,
};

export function createApiKeyRepository(db: Kysely<Database>, dialect: Dialect): ApiKeyRepository {
  const keys = tableAccess(db, API_KEYS);
  return {
    create: keys.insert,
    getById: keys.get,
    getByIds: keys.getMany,
    getBySecretHash: (secretHash) => keys.getBy('secret_hash', secretHash),

    async listSecretHashes(afterId, limit) {
      let query = db.selectFrom('api_keys').select(['id', 'secret_hash']).orderBy('id').limit(limit);
      if (afterId !== null) query = query.where('id', '>', afterId);
      const rows = await query.execute();
      return rows.map((row) => ({ id: row.id, secretHash: row.secret_hash }));
    },

    listByAccount: (accountId, page, options) =>
      keys.page(page, options?.playground === false ? { account_id: accountId, playground: 0 } : { account_id: accountId }),

    update(id, patch, now, eventOf) {
      if (eventOf === undefined) return keys.update(id, patch, now);
      // The key's state before the change is read under the row's lock, so of two racing changes exactly the one that
      // turned the key off records the event, and the event is stored only with the change it reports.
      return db.transaction().execute(async (trx) => {
        let lookup = trx.selectFrom('api_keys').selectAll().where('id', '=', id);
        if (dialect === 'postgres') lookup = lookup.forUpdate();
        const row = await lookup.executeTakeFirst();
        if (row === undefined) return null;
        const updated = await tableAccess(trx, API_KEYS).update(id, patch, now);
        if (updated === null) return null;
        const event = eventOf(toRecord(row), updated);
        if (event !== null) await insertWebhookEvent(trx.withTables<WebhookTables>(), event);
        return updated;
      });
    },

    async anyAllowsOrigin(origin) {
      // The JSON array holds the origin as a quoted string; LIKE wildcards in it are escaped.
      const pattern = `%${JSON.stringify(origin).replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
      const row = await db
        .selectFrom('api_keys')
        .select('id')
        .where('status', '!=', 'revoked')
        .where(sql<boolean>`${sql.ref('allowed_origins')} like ${pattern} escape '\\'`)
        .limit(1)
        .executeTakeFirst();
      return row !== undefined;
    },
  };
}
