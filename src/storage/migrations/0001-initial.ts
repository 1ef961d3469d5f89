import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * The initial schema, portable across SQLite and PostgreSQL: text ids, `bigint` nano-USD money and epoch-ms times,
 * `integer` counts, 0/1 booleans and JSON text.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('accounts')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('email', 'text', (column) => column.notNull().unique())
    .addColumn('password_hash', 'text')
    .addColumn('tier', 'text', (column) => column.notNull())
    .addColumn('balance_nano', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('credit_line_nano', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('alert_balance_nano', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('secret_hash', 'text', (column) => column.notNull())
    .addColumn('display_hint', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('quota_nano', 'bigint')
    .addColumn('spent_nano', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('allowed_models', 'text')
    .addColumn('ip_allowlist', 'text')
    .addColumn('expires_at', 'bigint')
    .addColumn('rpm', 'integer')
    .addColumn('tpm', 'integer')
    .addColumn('concurrency', 'integer')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('api_keys_secret_hash_unique').on('api_keys').column('secret_hash').unique().execute();
  await db.schema.createIndex('api_keys_account_id_index').on('api_keys').columns(['account_id', 'id']).execute();

  await db.schema
    .createTable('channels')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull().unique())
    .addColumn('type', 'text', (column) => column.notNull())
    .addColumn('base_url', 'text')
    .addColumn('api_keys_sealed', 'text', (column) => column.notNull())
    .addColumn('models', 'text', (column) => column.notNull())
    .addColumn('priority', 'integer', (column) => column.notNull())
    .addColumn('weight', 'integer', (column) => column.notNull())
    .addColumn('enabled', 'integer', (column) => column.notNull())
    .addColumn('headers', 'text', (column) => column.notNull())
    .addColumn('settings', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('models')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('public', 'integer', (column) => column.notNull())
    .addColumn('upstream', 'text')
    .addColumn('owned_by', 'text', (column) => column.notNull())
    .addColumn('input_per_mtok_nano', 'bigint')
    .addColumn('output_per_mtok_nano', 'bigint')
    .addColumn('cached_input_per_mtok_nano', 'bigint')
    .addColumn('per_request_nano', 'bigint')
    .addColumn('per_image_nano', 'bigint')
    .addColumn('per_audio_minute_nano', 'bigint')
    .addColumn('per_mchar_nano', 'bigint')
    .addColumn('rpm', 'integer')
    .addColumn('tpm', 'integer')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('plans')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('name', 'text', (column) => column.notNull().unique())
    .addColumn('period', 'text', (column) => column.notNull())
    .addColumn('quota_nano', 'bigint', (column) => column.notNull())
    .addColumn('overage_policy', 'text', (column) => column.notNull())
    .addColumn('overage_limit_nano', 'bigint')
    .addColumn('rpm', 'integer')
    .addColumn('tpm', 'integer')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('subscriptions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('plan_id', 'text', (column) => column.notNull().references('plans.id'))
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('starts_at', 'bigint', (column) => column.notNull())
    .addColumn('current_period_start', 'bigint', (column) => column.notNull())
    .addColumn('current_period_end', 'bigint', (column) => column.notNull())
    .addColumn('used_nano', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('subscriptions_account_id_index').on('subscriptions').columns(['account_id', 'id']).execute();
  await db.schema.createIndex('subscriptions_plan_id_index').on('subscriptions').column('plan_id').execute();

  await db.schema
    .createTable('ledger_entries')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('amount_nano', 'bigint', (column) => column.notNull())
    .addColumn('key_id', 'text')
    .addColumn('request_id', 'text')
    .addColumn('reason', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('ledger_entries_account_id_index').on('ledger_entries').columns(['account_id', 'id']).execute();

  await db.schema
    .createTable('usage_logs')
    .addColumn('request_id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text')
    .addColumn('key_id', 'text')
    .addColumn('model', 'text')
    .addColumn('channel_id', 'text')
    .addColumn('protocol', 'text', (column) => column.notNull())
    .addColumn('endpoint', 'text', (column) => column.notNull())
    .addColumn('stream', 'integer', (column) => column.notNull())
    .addColumn('status', 'integer', (column) => column.notNull())
    .addColumn('error_code', 'text')
    .addColumn('prompt_tokens', 'integer', (column) => column.notNull())
    .addColumn('completion_tokens', 'integer', (column) => column.notNull())
    .addColumn('cached_tokens', 'integer', (column) => column.notNull())
    .addColumn('reasoning_tokens', 'integer', (column) => column.notNull())
    .addColumn('total_tokens', 'integer', (column) => column.notNull())
    .addColumn('cost_nano', 'bigint', (column) => column.notNull())
    .addColumn('latency_ms', 'integer', (column) => column.notNull())
    .addColumn('ttfb_ms', 'integer')
    .addColumn('attempts', 'integer', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  // Each index ends in (created_at, request_id): the newest-first keyset order of `usage.query`.
  await db.schema.createIndex('usage_logs_created_at_index').on('usage_logs').columns(['created_at', 'request_id']).execute();
  await db.schema
    .createIndex('usage_logs_account_id_index')
    .on('usage_logs')
    .columns(['account_id', 'created_at', 'request_id'])
    .execute();
  await db.schema
    .createIndex('usage_logs_key_id_index')
    .on('usage_logs')
    .columns(['key_id', 'created_at', 'request_id'])
    .execute();

  await db.schema
    .createTable('announcements')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('title', 'text', (column) => column.notNull())
    .addColumn('body', 'text', (column) => column.notNull())
    .addColumn('level', 'text', (column) => column.notNull())
    .addColumn('published_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('announcements_published_at_index').on('announcements').column('published_at').execute();

  await db.schema
    .createTable('fx_rates')
    .addColumn('id', 'integer', (column) => column.primaryKey().check(sql`id = 1`))
    .addColumn('base', 'text', (column) => column.notNull())
    .addColumn('rates', 'text', (column) => column.notNull())
    .addColumn('as_of', 'bigint', (column) => column.notNull())
    .addColumn('source', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('settings')
    .addColumn('key', 'text', (column) => column.primaryKey())
    .addColumn('value', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
}

/** Drops everything `up` created (children before parents). */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of [
    'settings', 'fx_rates', 'announcements', 'usage_logs', 'ledger_entries', 'subscriptions', 'plans', 'models',
    'channels', 'api_keys', 'accounts',
  ]) {
    await db.schema.dropTable(table).ifExists().execute();
  }
}
