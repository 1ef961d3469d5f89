import type { Kysely } from 'kysely';

/**
 * Account overrides of the operator's guardrail policies:
 *
 * - `guardrails.accounts_may_override`: what accounts may do to the policy where it applies to them: `none` (existing
 *   policies), `relax` (a milder mode) or `disable` (also off).
 * - `guardrail_overrides`: one account's choice for one policy (by id, so a rename keeps it) at one scope: the account
 *   itself, one of its projects or one of its keys. Applied only while the policy's rule allows it.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('guardrails').addColumn('accounts_may_override', 'text', (column) => column.notNull().defaultTo('none')).execute();
  await db.schema.createTable('guardrail_overrides')
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('scope', 'text', (column) => column.notNull())
    .addColumn('target_id', 'text', (column) => column.notNull())
    .addColumn('guardrail_id', 'text', (column) => column.notNull())
    .addColumn('mode', 'text', (column) => column.notNull())
    .addColumn('set_by', 'text')
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('guardrail_overrides_pk', ['scope', 'target_id', 'guardrail_id'])
    .execute();
  await db.schema.createIndex('guardrail_overrides_account_id').on('guardrail_overrides').column('account_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('guardrail_overrides').execute();
  await db.schema.alterTable('guardrails').dropColumn('accounts_may_override').execute();
}
