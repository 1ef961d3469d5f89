import type { Kysely } from 'kysely';

/**
 * Plans an account chooses itself, paid from its prepaid balance, and alert thresholds per key.
 *
 * - `plans.self_service`: 1 when the console lets an account owner subscribe to or change to the plan.
 * - `plans.price_nano`: what one period costs, in nano-USD (0: free); taken from the balance when a period starts.
 * - `subscriptions.paid_through`: for a subscription bought in the console, the end of the last period paid (the
 *   subscription stops there unless renewed); null for the operator's grants.
 * - `subscriptions.renews`: 1 when the next period is bought from the balance as the paid one ends.
 * - `api_keys.alert_quota_percent`: the key's own quota alert threshold (null: the account's).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('plans').addColumn('self_service', 'integer', (column) => column.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('plans').addColumn('price_nano', 'bigint', (column) => column.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('subscriptions').addColumn('paid_through', 'bigint').execute();
  await db.schema.alterTable('subscriptions').addColumn('renews', 'integer', (column) => column.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('api_keys').addColumn('alert_quota_percent', 'integer').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('alert_quota_percent').execute();
  for (const column of ['renews', 'paid_through']) await db.schema.alterTable('subscriptions').dropColumn(column).execute();
  for (const column of ['price_nano', 'self_service']) await db.schema.alterTable('plans').dropColumn(column).execute();
}
