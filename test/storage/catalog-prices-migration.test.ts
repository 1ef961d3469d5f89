/**
 * Migration 0008 on both databases: model records the old env shortcuts wrote, still exactly as written, are
 * removed so the bundled prices take over; a record an operator created or changed stays; cache-write prices
 * get their own column.
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

async function insertModel(db: Kysely<Database>, id: string, prices: [bigint, bigint, bigint], updatedAt = 1000): Promise<void> {
  await sql`INSERT INTO models (id, kind, public, upstream, owned_by, input_per_mtok_nano, output_per_mtok_nano, cached_input_per_mtok_nano, created_at, updated_at)
    VALUES (${id}, 'chat', 1, NULL, 'anthropic', ${prices[0]}, ${prices[2]}, ${prices[1]}, 1000, ${updatedAt})`.execute(db);
}

async function checkMigration(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const before = await migrator.migrateTo('0005-alerts-and-redemption-codes');
  expect(before.error).toBeUndefined();
  // As the old ANTHROPIC_API_KEY shortcut wrote it; then the same model priced by an operator, and an edited one.
  await insertModel(db, 'claude-sonnet-4-5', [3_000_000_000n, 300_000_000n, 15_000_000_000n]);
  await insertModel(db, 'claude-haiku-4-5', [2_000_000_000n, 100_000_000n, 5_000_000_000n]);
  await insertModel(db, 'claude-opus-4-1', [15_000_000_000n, 1_500_000_000n, 75_000_000_000n], 2000);
  await insertModel(db, 'house-model', [1n, 1n, 1n]);
  await migrateToLatest(db);
  const rows = await db.selectFrom('models').select(['id', 'cache_write_per_mtok_nano']).orderBy('id').execute();
  expect(rows.map((row) => row.id)).toEqual(['claude-haiku-4-5', 'claude-opus-4-1', 'house-model']);
  expect(rows.every((row) => row.cache_write_per_mtok_nano === null)).toBe(true);
}

describe('migration 0008 (catalog prices)', () => {
  it('on SQLite', async () => {
    await checkMigration(await databases.sqlite());
  });

  it.skipIf(!postgresAvailable)('on PostgreSQL', async () => {
    await checkMigration(await databases.postgres());
  });
});
