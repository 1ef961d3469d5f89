import type { Kysely } from 'kysely';

/**
 * Signed webhooks (webhook-schema.ts):
 *
 * - `webhook_endpoints`: where an account (or, with `account_id` null, the operator) is told of events; its signing
 *   secret sealed with the gateway's secret key, the previous one kept valid until `previous_secret_until` after a
 *   rotation; `event_types` a JSON array (empty: every type); `format` `standard` (signed JSON) or `slack` (`{"text"}`).
 * - `webhook_events`: the outbox, one row per fact with the exact body every attempt sends (ids are derived from
 *   the fact, so recording it twice records it once).
 * - `webhook_deliveries`: one per event and endpoint; `next_attempt_at` doubles as the lease of the instance sending it.
 * - `webhook_attempts`: the delivery log (status, latency, a bounded excerpt of the answer).
 * - `alert_routes`: whether an account's alerts are mailed (no row: they are).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('webhook_endpoints')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text')
    .addColumn('url', 'text', (column) => column.notNull())
    .addColumn('description', 'text', (column) => column.notNull().defaultTo(''))
    .addColumn('format', 'text', (column) => column.notNull())
    .addColumn('event_types', 'text', (column) => column.notNull())
    .addColumn('enabled', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('secret_sealed', 'text', (column) => column.notNull())
    .addColumn('previous_secret_sealed', 'text')
    .addColumn('previous_secret_until', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('webhook_endpoints_account').on('webhook_endpoints').columns(['account_id', 'created_at']).execute();

  await db.schema.createTable('webhook_events')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text')
    .addColumn('type', 'text', (column) => column.notNull())
    .addColumn('body', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema.createTable('webhook_deliveries')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('event_id', 'text', (column) => column.notNull())
    .addColumn('endpoint_id', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text')
    .addColumn('state', 'text', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (column) => column.notNull())
    .addColumn('last_status', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addColumn('delivered_at', 'bigint')
    .addUniqueConstraint('webhook_deliveries_event_endpoint', ['event_id', 'endpoint_id'])
    .execute();
  await db.schema.createIndex('webhook_deliveries_due').on('webhook_deliveries').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('webhook_deliveries_endpoint').on('webhook_deliveries').columns(['endpoint_id', 'created_at']).execute();

  await db.schema.createTable('webhook_attempts')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('delivery_id', 'text', (column) => column.notNull())
    .addColumn('attempt', 'integer', (column) => column.notNull())
    .addColumn('started_at', 'bigint', (column) => column.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('latency_ms', 'integer', (column) => column.notNull())
    .addColumn('error', 'text')
    .addColumn('response_excerpt', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').columns(['delivery_id', 'attempt']).execute();

  await db.schema.createTable('alert_routes')
    .addColumn('account_id', 'text', (column) => column.primaryKey())
    .addColumn('mail', 'integer', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['alert_routes', 'webhook_attempts', 'webhook_deliveries', 'webhook_events', 'webhook_endpoints']) {
    await db.schema.dropTable(table).execute();
  }
}
