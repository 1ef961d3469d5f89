import { Migrator } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from './database-schema.js';
import { migrationProvider } from './migrations/migration-provider.js';

/**
 * Brings the schema to the latest migration (a no-op when it already is). Throws if a migration fails.
 *
 * Instances starting together migrate once: on PostgreSQL the migrator holds a session advisory lock around reading
 * the applied list and applying the rest; on SQLite the whole run is one `begin immediate` transaction (see
 * dialects.ts), which takes the file's write lock first. Whoever waits finds the schema current and does nothing.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName;
    const cause = error instanceof Error ? error.message : String(error);
    const which = failed === undefined ? '' : ` ${failed}`;
    throw new Error(`Storage migration${which} failed: ${cause}`, { cause: error });
  }
}

/** Names of the migrations this build knows that the database has not applied yet. */
export async function pendingMigrations(db: Kysely<Database>): Promise<string[]> {
  const migrations = await new Migrator({ db, provider: migrationProvider }).getMigrations();
  return migrations.filter((migration) => migration.executedAt === undefined).map((migration) => migration.name);
}
