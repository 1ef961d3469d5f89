/**
 * Migration 0054 on both databases: lines of a batch sent wholly to a provider before the per-line marker existed
 * are marked as the provider's part (so the queue keeps leaving them alone); lines of a queue-run batch are not.
 */
import { type Kysely, sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/storage/migrate.js';
import type { Database } from '../../src/storage/database-schema.js';
import { migrationProvider } from '../../src/storage/migrations/migration-provider.js';
import { migrationDatabases, postgresAvailable } from './migration-databases.js';

const databases = migrationDatabases();

afterEach(() => databases.cleanup());

async function insertBatch(db: Kysely<Database>, id: string, lines: number): Promise<void> {
  await sql`INSERT INTO batches (id, account_id, key_id, endpoint, input_file_id, completion_window, status, total, completed, failed, cost_nano,
    input_tokens, cached_tokens, output_tokens, reasoning_tokens, created_at, expires_at)
    VALUES (${id}, 'acct', 'key', '/v1/chat/completions', 'file', '24h', 'in_progress', ${lines}, 0, 0, 0, 0, 0, 0, 0, 1000, 2000)`.execute(db);
  for (let line = 1; line <= lines; line += 1) {
    await sql`INSERT INTO batch_lines (batch_id, line, custom_id, body, state, attempts, cost_nano) VALUES (${id}, ${line}, ${`c-${line}`}, '{}', 'pending', 0, 0)`.execute(db);
  }
}

async function checkMigration(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const before = await migrator.migrateTo('0053-file-uploads');
  expect(before.error).toBeUndefined();
  await insertBatch(db, 'batch_provider', 3);
  await insertBatch(db, 'batch_queue', 2);
  await sql`INSERT INTO provider_batches (batch_id, channel_id, provider, state, cancel_sent, next_at) VALUES ('batch_provider', 'ch', 'openai', 'running', 0, 0)`.execute(db);
  await migrateToLatest(db);
  const rows = await sql<{ batch_id: string; via_provider: number | string }>`SELECT batch_id, via_provider FROM batch_lines ORDER BY batch_id, line`.execute(db);
  expect(rows.rows.map((row) => `${row.batch_id}:${Number(row.via_provider)}`)).toEqual([
    'batch_provider:1', 'batch_provider:1', 'batch_provider:1', 'batch_queue:0', 'batch_queue:0',
  ]);
}

describe('migration 0054 (the provider part of a batch\'s lines)', () => {
  it('on SQLite', async () => {
    await checkMigration(await databases.sqlite());
  });

  it.skipIf(!postgresAvailable)('on PostgreSQL', async () => {
    await checkMigration(await databases.postgres());
  });
});
