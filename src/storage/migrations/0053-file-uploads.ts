import { PostgresAdapter, type Kysely } from 'kysely';

/**
 * Resumable file uploads (Gemini's Files API, batch-schema.ts):
 *
 * - `files.mime_type`: the content type a file was uploaded with (null: not given, as OpenAI's uploads).
 * - `file_uploads`: an upload started but not finished: its owner, declared size and type, the bytes received so far,
 *   and when it is abandoned.
 * - `file_upload_chunks`: the bytes received, one row a chunk by offset, until the upload is finished into the file
 *   store (any instance may receive any chunk).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const bytes = db.getExecutor().adapter instanceof PostgresAdapter ? 'bytea' : 'blob';
  await db.schema.alterTable('files').addColumn('mime_type', 'text').execute();
  await db.schema.createTable('file_uploads')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('display_name', 'text', (column) => column.notNull())
    .addColumn('mime_type', 'text', (column) => column.notNull())
    .addColumn('declared_bytes', 'bigint', (column) => column.notNull())
    .addColumn('received_bytes', 'bigint', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('file_uploads_expiry_index').on('file_uploads').column('expires_at').execute();
  await db.schema.createTable('file_upload_chunks')
    .addColumn('upload_id', 'text', (column) => column.notNull())
    .addColumn('offset', 'bigint', (column) => column.notNull())
    .addColumn('content', bytes, (column) => column.notNull())
    .addPrimaryKeyConstraint('file_upload_chunks_primary_key', ['upload_id', 'offset'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('file_upload_chunks').execute();
  await db.schema.dropTable('file_uploads').execute();
  await db.schema.alterTable('files').dropColumn('mime_type').execute();
}
