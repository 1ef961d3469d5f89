import type { Insertable, Kysely, Selectable } from 'kysely';
import type { SecretBox } from '../../shared/secret-box.js';
import { parseObject, parseStringArray, parseStringRecord, toBoolean, toNumber, toOneOf } from '../convert.js';
import type { GuardrailDatabase, GuardrailsTable } from '../guardrail-schema.js';
import { GUARDRAIL_OVERRIDE_MODES, GUARDRAIL_OVERRIDE_RULES, GUARDRAIL_OVERRIDE_SCOPES, GUARDRAIL_SCOPES, type GuardrailOverride, type GuardrailRecord, type GuardrailRepository } from '../../domain/guardrail-records.js';
import type { GuardrailOverridesTable } from '../guardrail-schema.js';

function toRecord(row: Selectable<GuardrailsTable>, box: SecretBox): GuardrailRecord {
  return {
    id: row.id,
    name: row.name,
    kind: row.kind,
    mode: row.mode,
    applies_to: row.applies_to,
    ...(row.settings === null ? {} : { settings: parseObject(row.settings, 'guardrails.settings') }),
    ...(row.headers_sealed === null ? {} : { headers: parseStringRecord(box.open(row.headers_sealed), 'guardrails.headers_sealed') }),
    accounts_may_use: toBoolean(row.accounts_may_use),
    accounts_may_override: toOneOf(row.accounts_may_override, GUARDRAIL_OVERRIDE_RULES, 'guardrails.accounts_may_override'),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

function columns(record: GuardrailRecord, box: SecretBox): Omit<Insertable<GuardrailsTable>, 'id' | 'created_at'> {
  return {
    name: record.name,
    kind: record.kind,
    mode: record.mode,
    applies_to: record.applies_to,
    settings: record.settings === undefined ? null : JSON.stringify(record.settings),
    headers_sealed: record.headers === undefined || Object.keys(record.headers).length === 0 ? null : box.seal(JSON.stringify(record.headers)),
    accounts_may_use: record.accounts_may_use === true ? 1 : 0,
    accounts_may_override: record.accounts_may_override ?? 'none',
    updated_at: record.updatedAt,
  };
}

function toOverride(row: Selectable<GuardrailOverridesTable>): GuardrailOverride {
  return {
    accountId: row.account_id,
    scope: toOneOf(row.scope, GUARDRAIL_OVERRIDE_SCOPES, 'guardrail override scope'),
    targetId: row.target_id,
    guardrailId: row.guardrail_id,
    mode: toOneOf(row.mode, GUARDRAIL_OVERRIDE_MODES, 'guardrail override mode'),
    setBy: row.set_by,
    updatedAt: toNumber(row.updated_at),
  };
}

/** Policies with their webhook headers sealed by `box` at rest. */
export function createGuardrailRepository(db: Kysely<GuardrailDatabase>, box: SecretBox): GuardrailRepository {
  return {
    async create(record) {
      await db.insertInto('guardrails').values({ id: record.id, created_at: record.createdAt, ...columns(record, box) }).execute();
    },
    async list() {
      const rows = await db.selectFrom('guardrails').selectAll().orderBy('name').execute();
      return rows.map((row) => toRecord(row, box));
    },
    async getById(id) {
      const row = await db.selectFrom('guardrails').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : toRecord(row, box);
    },
    async update(record) {
      await db.updateTable('guardrails').set(columns(record, box)).where('id', '=', record.id).execute();
    },
    async delete(id) {
      const result = await db.deleteFrom('guardrails').where('id', '=', id).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async listBindings() {
      const rows = await db.selectFrom('guardrail_bindings').selectAll().execute();
      return rows.map((row) => ({
        scope: toOneOf(row.scope, GUARDRAIL_SCOPES, 'guardrail binding scope'),
        targetId: row.target_id,
        names: parseStringArray(row.names, 'guardrail_bindings.names'),
      }));
    },
    async setBinding(binding, now) {
      if (binding.names.length === 0) {
        await db.deleteFrom('guardrail_bindings').where('scope', '=', binding.scope).where('target_id', '=', binding.targetId).execute();
        return;
      }
      const names = JSON.stringify(binding.names);
      await db.insertInto('guardrail_bindings')
        .values({ scope: binding.scope, target_id: binding.targetId, names, updated_at: now })
        .onConflict((conflict) => conflict.columns(['scope', 'target_id']).doUpdateSet({ names, updated_at: now }))
        .execute();
    },
    async listOverrides(accountId) {
      let query = db.selectFrom('guardrail_overrides').selectAll();
      if (accountId !== undefined) query = query.where('account_id', '=', accountId);
      const rows = await query.orderBy('account_id').orderBy('scope').orderBy('target_id').orderBy('guardrail_id').execute();
      return rows.map(toOverride);
    },
    async setOverride(override) {
      const values = { mode: override.mode, set_by: override.setBy, updated_at: override.updatedAt };
      await db.insertInto('guardrail_overrides')
        .values({ account_id: override.accountId, scope: override.scope, target_id: override.targetId, guardrail_id: override.guardrailId, ...values })
        .onConflict((conflict) => conflict.columns(['scope', 'target_id', 'guardrail_id']).doUpdateSet(values))
        .execute();
    },
    async clearOverride(accountId, scope, targetId, guardrailId) {
      const result = await db.deleteFrom('guardrail_overrides')
        .where('account_id', '=', accountId).where('scope', '=', scope).where('target_id', '=', targetId).where('guardrail_id', '=', guardrailId)
        .executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async clearOverridesOf(filter) {
      const query = db.deleteFrom('guardrail_overrides');
      await ('guardrailId' in filter ? query.where('guardrail_id', '=', filter.guardrailId) : query.where('scope', '=', filter.scope).where('target_id', '=', filter.targetId)).execute();
    },
  };
}
