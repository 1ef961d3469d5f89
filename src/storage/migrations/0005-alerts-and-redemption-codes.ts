import type { Kysely } from 'kysely';

/**
 * Alerts and redemption codes.
 *
 * - `accounts.alert_quota_percent`: the account's quota alert threshold in percent (null: no quota alerts).
 * - `alert_states`: one row per watched subject (an account's balance, a key's quota, a subscription's quota) that
 *   has crossed its threshold at least once. The row remembers the crossing so exactly one mail goes out per
 *   crossing, even with several gateway instances: `armed` → `pending` (claimed, mail owed) → `notified`, and back
 *   to `armed` when the value is over the threshold again.
 * - `redemption_codes`: codes worth an amount, stored as the SHA-256 of the code (never the code), redeemed once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('accounts').addColumn('alert_quota_percent', 'integer').execute();

  await db.schema
    .createTable('alert_states')
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('subject_id', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    // The subscription period the crossing belongs to (0 for balances and keys).
    .addColumn('period_start', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('state', 'text', (column) => column.notNull())
    .addColumn('value_nano', 'bigint', (column) => column.notNull())
    .addColumn('threshold_nano', 'bigint', (column) => column.notNull())
    .addColumn('limit_nano', 'bigint')
    .addColumn('percent', 'integer')
    .addColumn('crossed_at', 'bigint', (column) => column.notNull())
    .addColumn('attempts', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('notified_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('alert_states_pkey', ['kind', 'subject_id'])
    .execute();
  await db.schema.createIndex('alert_states_state_index').on('alert_states').columns(['state', 'next_attempt_at']).execute();
  await db.schema.createIndex('alert_states_account_id_index').on('alert_states').column('account_id').execute();

  await db.schema
    .createTable('redemption_codes')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('code_hash', 'text', (column) => column.notNull().unique())
    .addColumn('hint', 'text', (column) => column.notNull())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('amount_nano', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('disabled_at', 'bigint')
    .addColumn('redeemed_by', 'text', (column) => column.references('accounts.id'))
    .addColumn('redeemed_at', 'bigint')
    .addColumn('ledger_entry_id', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('redemption_codes_redeemed_by_index').on('redemption_codes').column('redeemed_by').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('redemption_codes').ifExists().execute();
  await db.schema.dropTable('alert_states').ifExists().execute();
  await db.schema.alterTable('accounts').dropColumn('alert_quota_percent').execute();
}
