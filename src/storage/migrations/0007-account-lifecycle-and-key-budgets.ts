import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/** The `default` tier's limits when an operator has not set them: every account has a finite window. */
export const DEFAULT_TIER_RPM = 3_000;
export const DEFAULT_TIER_TPM = 10_000_000;

/**
 * Account lifecycle, per-account limits, per-key period budgets and browser origins.
 *
 * - `accounts.status`: `enabled`, `disabled` (keys refused, nothing deleted) or `deleted` (keys revoked, personal
 *   data erased; the row stays so ledger entries, invoices and usage rows keep their account). `deleted_at` records
 *   when.
 * - `accounts.rpm`/`tpm`/`concurrency`: per-account limits overriding the tier's (null: the tier's).
 * - `api_keys.budget_*`: a spend limit that resets each UTC day, week or month. `budget_spent_nano` counts the spend
 *   of the period starting at `budget_period_start`; a later period starts again from zero.
 * - `api_keys.allowed_origins`: JSON array of browser origins allowed to call with the key (null: none).
 * - The `default` tier gets finite limits when it still has none, so every billed answer describes a real window.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('status', 'text', (column) => column.notNull().defaultTo('enabled')).execute();
  await db.schema.alterTable('accounts').addColumn('deleted_at', 'bigint').execute();
  await db.schema.alterTable('accounts').addColumn('rpm', 'bigint').execute();
  await db.schema.alterTable('accounts').addColumn('tpm', 'bigint').execute();
  await db.schema.alterTable('accounts').addColumn('concurrency', 'integer').execute();
  await db.schema.alterTable('api_keys').addColumn('budget_period', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('budget_limit_nano', 'bigint').execute();
  await db.schema.alterTable('api_keys').addColumn('budget_spent_nano', 'bigint', (column) => column.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('api_keys').addColumn('budget_period_start', 'bigint', (column) => column.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('api_keys').addColumn('allowed_origins', 'text').execute();
  await sql`update tiers set rpm = ${DEFAULT_TIER_RPM}, tpm = ${DEFAULT_TIER_TPM} where name = 'default' and rpm is null and tpm is null`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['status', 'deleted_at', 'rpm', 'tpm', 'concurrency']) await db.schema.alterTable('accounts').dropColumn(column).execute();
  for (const column of ['budget_period', 'budget_limit_nano', 'budget_spent_nano', 'budget_period_start', 'allowed_origins']) {
    await db.schema.alterTable('api_keys').dropColumn(column).execute();
  }
}
