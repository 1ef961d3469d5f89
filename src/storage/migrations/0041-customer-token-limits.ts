import type { Kysely } from 'kysely';

/**
 * End-customer rules gain tokens per minute (`tpm`) and requests in flight at once (`concurrency`) beside RPM; null:
 * no such limit. Rules saved before keep neither.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('customer_rules').addColumn('tpm', 'bigint').execute();
  await db.schema.alterTable('customer_rules').addColumn('concurrency', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('customer_rules').dropColumn('concurrency').execute();
  await db.schema.alterTable('customer_rules').dropColumn('tpm').execute();
}
