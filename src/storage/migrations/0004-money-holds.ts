import type { Kysely } from 'kysely';

/**
 * Money that adds up (reservations, subscription consumption, shortfalls):
 * - `money_holds`: what each gateway instance holds from each pool of funds (an account's wallet, a key's quota cap,
 *   a subscription's period quota and its overage allowance) for requests in flight plus a small lease;
 * - `gateway_instances`: one heartbeat row per running instance, so holds of an instance gone for good are released;
 * - `subscription_usage`: one row per request paid (in part) by a subscription, the evidence of `used_nano`;
 * - subscriptions gain the overage spent in the period and a scheduled cancellation; ledger entries the part of a
 *   charge the funds could not cover (recorded, never taken below zero or the credit line).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('money_holds')
    .addColumn('instance_id', 'text', (column) => column.notNull())
    .addColumn('pool', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('held_nano', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('money_holds_pkey', ['instance_id', 'pool'])
    .execute();
  await db.schema.createIndex('money_holds_pool_index').on('money_holds').column('pool').execute();
  await db.schema.createIndex('money_holds_account_id_index').on('money_holds').column('account_id').execute();

  await db.schema
    .createTable('gateway_instances')
    .addColumn('instance_id', 'text', (column) => column.primaryKey())
    .addColumn('started_at', 'bigint', (column) => column.notNull())
    .addColumn('heartbeat_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('subscription_usage')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('subscription_id', 'text', (column) => column.notNull().references('subscriptions.id'))
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('key_id', 'text')
    .addColumn('request_id', 'text')
    .addColumn('period_start', 'bigint', (column) => column.notNull())
    .addColumn('amount_nano', 'bigint', (column) => column.notNull())
    .addColumn('overage_nano', 'bigint', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createIndex('subscription_usage_period_index')
    .on('subscription_usage')
    .columns(['subscription_id', 'period_start'])
    .execute();

  await db.schema.alterTable('subscriptions').addColumn('overage_used_nano', 'bigint', (column) => column.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('subscriptions').addColumn('cancel_at', 'bigint').execute();
  await db.schema.alterTable('ledger_entries').addColumn('shortfall_nano', 'bigint', (column) => column.notNull().defaultTo(0)).execute();
  await db.schema.createIndex('ledger_entries_key_id_index').on('ledger_entries').column('key_id').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('ledger_entries_key_id_index').ifExists().execute();
  await db.schema.alterTable('ledger_entries').dropColumn('shortfall_nano').execute();
  await db.schema.alterTable('subscriptions').dropColumn('cancel_at').execute();
  await db.schema.alterTable('subscriptions').dropColumn('overage_used_nano').execute();
  for (const table of ['subscription_usage', 'gateway_instances', 'money_holds']) await db.schema.dropTable(table).ifExists().execute();
}
