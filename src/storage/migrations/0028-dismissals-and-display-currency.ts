import type { Kysely } from 'kysely';

/**
 * The announcements each console user dismissed: the console shows the newest announcement as a banner until its
 * reader dismisses it, for that person only. Rows go with their user or announcement.
 *
 * `account_display_currency`: the currency an account's console shows amounts in (USD, the billing currency, when
 * there is no row). Money stays USD everywhere else.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('announcement_dismissals')
    .addColumn('user_id', 'text', (column) => column.notNull().references('console_users.id').onDelete('cascade'))
    .addColumn('announcement_id', 'text', (column) => column.notNull().references('announcements.id').onDelete('cascade'))
    .addColumn('dismissed_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('announcement_dismissals_pkey', ['user_id', 'announcement_id'])
    .execute();
  await db.schema.createIndex('announcement_dismissals_announcement_index').on('announcement_dismissals').column('announcement_id').execute();
  await db.schema
    .createTable('account_display_currency')
    .addColumn('account_id', 'text', (column) => column.primaryKey().references('accounts.id').onDelete('cascade'))
    .addColumn('currency', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('account_display_currency').execute();
  await db.schema.dropTable('announcement_dismissals').execute();
}
