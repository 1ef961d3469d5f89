import type { Kysely } from 'kysely';

/**
 * `guardrails.accounts_may_use`: 1 when account owners and admins may attach the policy to their own keys in the
 * console (the operator binds any policy anywhere; accounts choose only among these). 0 for existing policies.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('guardrails').addColumn('accounts_may_use', 'integer', (column) => column.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('guardrails').dropColumn('accounts_may_use').execute();
}
