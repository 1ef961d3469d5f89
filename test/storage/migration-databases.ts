/** Empty databases for migration tests, on both dialects, each removed by `cleanup()` (call it after each test). */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kysely } from 'kysely';
import { createPostgresDialect, openSqlite } from '../../src/storage/dialects.js';
import type { Database } from '../../src/storage/database-schema.js';
import { createThrowawayPostgresDatabase, isPostgresUrl } from '../support/postgres-test-database.js';

/** The PostgreSQL server the suite may use (TEST_DATABASE_URL), if any. */
export const postgresAdminUrl = process.env.TEST_DATABASE_URL;
export const postgresAvailable = isPostgresUrl(postgresAdminUrl);

export interface MigrationDatabases {
  sqlite(): Promise<Kysely<Database>>;
  postgres(): Promise<Kysely<Database>>;
  cleanup(): Promise<void>;
}

export function migrationDatabases(): MigrationDatabases {
  const cleanups: Array<() => Promise<void>> = [];
  return {
    async sqlite() {
      const directory = await mkdtemp(path.join(tmpdir(), 'unigate-migration-'));
      const db = new Kysely<Database>({ dialect: openSqlite(path.join(directory, 'gateway.db')).dialect });
      cleanups.push(async () => {
        await db.destroy();
        await rm(directory, { recursive: true, force: true });
      });
      return db;
    },
    async postgres() {
      const database = await createThrowawayPostgresDatabase(postgresAdminUrl);
      const db = new Kysely<Database>({ dialect: createPostgresDialect(database.url) });
      cleanups.push(async () => {
        await db.destroy();
        await database.drop();
      });
      return db;
    },
    async cleanup() {
      for (const cleanup of cleanups.splice(0)) await cleanup();
    },
  };
}
