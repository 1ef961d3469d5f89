import type { Kysely } from 'kysely';

/**
 * Guardrails (guardrail-schema.ts):
 *
 * - `guardrails`: the operator's policies, each named (unique), of a kind, a mode and a direction, with the kind's
 *   settings as JSON.
 * - `guardrail_bindings`: which policies apply to one model, account or key (`scope`, `target_id`), as a JSON array
 *   of names; a request runs the union of its model's, account's and key's.
 * - `usage_logs.guardrails`: what the policies did on the request, as JSON (names, outcomes and counts, never text).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('guardrails')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull().unique())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('mode', 'text', (column) => column.notNull())
    .addColumn('applies_to', 'text', (column) => column.notNull())
    .addColumn('settings', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema.createTable('guardrail_bindings')
    .addColumn('scope', 'text', (column) => column.notNull())
    .addColumn('target_id', 'text', (column) => column.notNull())
    .addColumn('names', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('guardrail_bindings_pk', ['scope', 'target_id'])
    .execute();

  await db.schema.alterTable('usage_logs').addColumn('guardrails', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage_logs').dropColumn('guardrails').execute();
  await db.schema.dropTable('guardrail_bindings').execute();
  await db.schema.dropTable('guardrails').execute();
}
