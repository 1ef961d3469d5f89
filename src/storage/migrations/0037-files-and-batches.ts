import { PostgresAdapter, type Kysely } from 'kysely';

/**
 * Files and batches (batch-schema.ts):
 *
 * - `models.batch_input_per_mtok_nano`, `models.batch_output_per_mtok_nano`: the operator's prices of batch lines
 *   (null: the normal price).
 * - `files`: what an account uploaded (or a batch wrote) through `/v1/files`: its purpose, name, size, expiry, and
 *   where its bytes are kept (`store`: `database` keeps them in `file_contents`).
 * - `file_contents`: the bytes of files kept in the database, one row per file.
 * - `batches`: an account's batch jobs (OpenAI's Batch API shape), their state, counts, cost and result files.
 * - `batch_lines`: the durable queue, one row per input line with its state (`pending`, `running`, `done`,
 *   `failed`, `cancelled`); a running line carries the lease of the instance running it, so another instance takes it
 *   over only once the lease has run out.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('models').addColumn('batch_input_per_mtok_nano', 'bigint').execute();
  await db.schema.alterTable('models').addColumn('batch_output_per_mtok_nano', 'bigint').execute();
  const bytes = db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob';
  await db.schema.createTable('files')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('purpose', 'text', (column) => column.notNull())
    .addColumn('filename', 'text', (column) => column.notNull())
    .addColumn('bytes', 'bigint', (column) => column.notNull())
    .addColumn('store', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint')
    .execute();
  await db.schema.createIndex('files_account_index').on('files').columns(['account_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('files_expiry_index').on('files').columns(['expires_at']).execute();
  await db.schema.createTable('file_contents')
    .addColumn('file_id', 'text', (column) => column.primaryKey())
    .addColumn('content', bytes, (column) => column.notNull())
    .execute();

  await db.schema.createTable('batches')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('key_id', 'text', (column) => column.notNull())
    .addColumn('endpoint', 'text', (column) => column.notNull())
    .addColumn('input_file_id', 'text', (column) => column.notNull())
    .addColumn('completion_window', 'text', (column) => column.notNull())
    .addColumn('status', 'text', (column) => column.notNull())
    .addColumn('metadata', 'text')
    .addColumn('output_file_id', 'text')
    .addColumn('error_file_id', 'text')
    .addColumn('errors', 'text')
    .addColumn('output_expires_seconds', 'bigint')
    .addColumn('total', 'bigint', (column) => column.notNull())
    .addColumn('completed', 'bigint', (column) => column.notNull())
    .addColumn('failed', 'bigint', (column) => column.notNull())
    .addColumn('cost_nano', 'bigint', (column) => column.notNull())
    .addColumn('input_tokens', 'bigint', (column) => column.notNull())
    .addColumn('cached_tokens', 'bigint', (column) => column.notNull())
    .addColumn('output_tokens', 'bigint', (column) => column.notNull())
    .addColumn('reasoning_tokens', 'bigint', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('in_progress_at', 'bigint')
    .addColumn('finalizing_at', 'bigint')
    .addColumn('completed_at', 'bigint')
    .addColumn('failed_at', 'bigint')
    .addColumn('expired_at', 'bigint')
    .addColumn('cancelling_at', 'bigint')
    .addColumn('cancelled_at', 'bigint')
    .addColumn('finalize_owner', 'text')
    .addColumn('finalize_until', 'bigint')
    .execute();
  await db.schema.createIndex('batches_account_index').on('batches').columns(['account_id', 'created_at', 'id']).execute();
  await db.schema.createIndex('batches_status_index').on('batches').columns(['status']).execute();

  await db.schema.createTable('batch_lines')
    .addColumn('batch_id', 'text', (column) => column.notNull())
    .addColumn('line', 'bigint', (column) => column.notNull())
    .addColumn('custom_id', 'text', (column) => column.notNull())
    .addColumn('body', 'text', (column) => column.notNull())
    .addColumn('state', 'text', (column) => column.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'bigint')
    .addColumn('attempts', 'bigint', (column) => column.notNull())
    .addColumn('status_code', 'bigint')
    .addColumn('request_id', 'text')
    .addColumn('result', 'text')
    .addColumn('cost_nano', 'bigint', (column) => column.notNull())
    .addColumn('finished_at', 'bigint')
    .addPrimaryKeyConstraint('batch_lines_pk', ['batch_id', 'line'])
    .execute();
  await db.schema.createIndex('batch_lines_state_index').on('batch_lines').columns(['state', 'lease_until']).execute();
  await db.schema.createIndex('batch_lines_finished_index').on('batch_lines').columns(['finished_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('batch_lines').execute();
  await db.schema.dropTable('batches').execute();
  await db.schema.dropTable('file_contents').execute();
  await db.schema.dropTable('files').execute();
  await db.schema.alterTable('models').dropColumn('batch_output_per_mtok_nano').execute();
  await db.schema.alterTable('models').dropColumn('batch_input_per_mtok_nano').execute();
}
