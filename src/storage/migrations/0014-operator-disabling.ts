import type { Kysely } from 'kysely';

/**
 * An operator an owner disabled keeps their role on record (and their audit trail) but no operator route answers
 * them until an owner enables them again: `disabled_at` (null while active) and `disabled_by` (the owner's user id).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('console_operators').addColumn('disabled_at', 'bigint').execute();
  await db.schema.alterTable('console_operators').addColumn('disabled_by', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('console_operators').dropColumn('disabled_by').execute();
  await db.schema.alterTable('console_operators').dropColumn('disabled_at').execute();
}
