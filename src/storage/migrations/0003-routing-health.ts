import type { Kysely } from 'kysely';

/**
 * Routing and failover: upstream keys a channel's upstream rejected (401/403), kept for the admin until the
 * channel is updated, and the channels each request tried, in order, on its usage row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('channel_key_flags')
    .addColumn('channel_id', 'text', (column) => column.notNull())
    // A truncated SHA-256 of the key: it names the key without storing it a second time.
    .addColumn('key_fingerprint', 'text', (column) => column.notNull())
    .addColumn('key_index', 'integer', (column) => column.notNull())
    .addColumn('reason', 'text', (column) => column.notNull())
    .addColumn('flagged_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('channel_key_flags_pkey', ['channel_id', 'key_fingerprint'])
    .execute();
  // Comma-separated channel ids in attempt order; null on rows written before this migration.
  await db.schema.alterTable('usage_logs').addColumn('attempted_channels', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage_logs').dropColumn('attempted_channels').execute();
  await db.schema.dropTable('channel_key_flags').ifExists().execute();
}
