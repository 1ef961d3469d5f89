import type { Kysely } from 'kysely';

/**
 * `stream_checkpoints`: what each stream in flight would be billed if it stopped now, written by its instance every
 * few seconds. A stream's settlement deletes its row; an instance that dies leaves its rows, and whoever recovers
 * the instance (its own restart, or any instance once it is stale) charges each at its checkpoint instead of
 * releasing its hold. `reservation` and `usage_row` are JSON written and read by the billing layer.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('stream_checkpoints')
    .addColumn('request_id', 'text', (column) => column.primaryKey())
    .addColumn('instance_id', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('cost_nano', 'bigint', (column) => column.notNull())
    .addColumn('reservation', 'text', (column) => column.notNull())
    .addColumn('usage_row', 'text', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('stream_checkpoints_instance_index').on('stream_checkpoints').columns(['instance_id', 'account_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('stream_checkpoints').ifExists().execute();
}
