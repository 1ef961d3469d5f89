import type { Kysely } from 'kysely';

/**
 * Batches sent to a provider's own batch API (provider-batch-schema.ts):
 *
 * - `provider_batches`: one row per gateway batch whose lines a provider runs: the channel, the upstream's batch and
 *   input file ids, where the work stands (`submit`, `running`, `collect`, `done`, or `fallback` when the gateway's
 *   own queue runs it after all), when it is next looked at, and the instance looking at it now (a lease, so one
 *   instance at a time submits, polls or collects it). While a batch has a row not in `fallback`, the gateway's queue
 *   leaves its lines alone.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('provider_batches')
    .addColumn('batch_id', 'text', (column) => column.primaryKey())
    .addColumn('channel_id', 'text', (column) => column.notNull())
    .addColumn('provider', 'text', (column) => column.notNull())
    .addColumn('state', 'text', (column) => column.notNull())
    .addColumn('upstream_file_id', 'text')
    .addColumn('upstream_batch_id', 'text')
    .addColumn('upstream_status', 'text')
    .addColumn('cancel_sent', 'bigint', (column) => column.notNull())
    .addColumn('next_at', 'bigint', (column) => column.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('error', 'text')
    .execute();
  await db.schema.createIndex('provider_batches_due_index').on('provider_batches').columns(['state', 'next_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('provider_batches').execute();
}
