import { sql, type Kysely } from 'kysely';
import { createSqliteTrigger, isPostgres } from './0032-end-customers.js';

/**
 * SQLite: `usage_rollups` is kept by the gateway, which adds each write batch's sums with one upsert per group in the
 * transaction of the batch's usage rows (usage-rollup-sums.ts), so the per-row trigger that ran three upserts for every
 * row goes. The rollups already stored stay as they are: both ways count exactly the rows inserted. PostgreSQL keeps
 * its per-statement trigger, which already sums each batch.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  await sql`drop trigger if exists "usage_logs_rollup"`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (isPostgres(db)) return;
  await createSqliteTrigger(db);
}
