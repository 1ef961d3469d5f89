import { DEFAULT_MIGRATION_TABLE, Migrator } from 'kysely/migration';
import type { Kysely } from 'kysely';
import type { Database } from './database-schema.js';
import { migrationProvider } from './migrations/migration-provider.js';

/** What a migration run did: the migrations it applied, and those a newer release applied that this build does not know. */
export interface MigrationOutcome {
  applied: string[];
  newer: string[];
}

/** The schema as this build sees it. */
interface SchemaState {
  /** Migrations this build knows that the database has not applied, in name order. */
  pending: string[];
  /** Applied migrations this build does not know whose names sort after its last one: a newer release's. */
  newer: string[];
  /** Applied migrations this build does not know whose names sort among its own: not from this line of releases. */
  foreign: string[];
}

async function knownMigrations(): Promise<string[]> {
  return Object.keys(await migrationProvider.getMigrations()).sort();
}

async function appliedMigrations(db: Kysely<Database>): Promise<string[]> {
  const tables = await db.introspection.getTables({ withInternalKyselyTables: true });
  if (!tables.some((table) => table.name === DEFAULT_MIGRATION_TABLE)) return [];
  const rows = await db.withTables<{ [DEFAULT_MIGRATION_TABLE]: { name: string } }>().selectFrom(DEFAULT_MIGRATION_TABLE).select('name').execute();
  return rows.map((row) => row.name);
}

async function schemaState(db: Kysely<Database>): Promise<SchemaState> {
  const known = await knownMigrations();
  const applied = await appliedMigrations(db);
  const appliedSet = new Set(applied);
  const knownSet = new Set(known);
  const last = known.at(-1) ?? '';
  const unknown = applied.filter((name) => !knownSet.has(name)).sort();
  return {
    pending: known.filter((name) => !appliedSet.has(name)),
    newer: unknown.filter((name) => name > last),
    foreign: unknown.filter((name) => name <= last),
  };
}

/**
 * Brings the schema to this build's latest migration (a no-op when it already is). Throws if a migration fails.
 *
 * Instances starting together migrate once: on PostgreSQL the migrator holds a session advisory lock around reading
 * the applied list and applying the rest; on SQLite the whole run is one `begin immediate` transaction (see
 * dialects.ts), which takes the file's write lock first. Whoever waits finds the schema current and does nothing.
 *
 * A schema ahead of the build is accepted: migrations are expand-only between two consecutive releases, so a build
 * runs on the schema of the next one, and during a rolling upgrade an older instance must start (or restart) after
 * a newer one migrated. Once every migration of the build is applied the migrator is not run at all (the schema only
 * moves forward, so no lock is needed to find nothing to do); it would refuse the newer names it does not know.
 * Everything else stays refused as the migrator refuses it: an applied migration unknown to the build whose name
 * sorts among the build's own, or a build migration missing while later ones are applied.
 */
export async function migrateToLatest(db: Kysely<Database>): Promise<MigrationOutcome> {
  const before = await schemaState(db);
  const foreign = before.foreign[0];
  if (foreign !== undefined) throw new Error(`Storage migration failed: corrupted migrations: previously executed migration ${foreign} is missing from this build`);
  if (before.pending.length === 0) return { applied: [], newer: before.newer };

  const migrator = new Migrator({ db, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  if (error !== undefined) {
    const failed = results?.find((result) => result.status === 'Error')?.migrationName;
    const cause = error instanceof Error ? error.message : String(error);
    const which = failed === undefined ? '' : ` ${failed}`;
    throw new Error(`Storage migration${which} failed: ${cause}`, { cause: error });
  }
  const applied = (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
  return { applied, newer: [] };
}

/** Names of the migrations this build knows that the database has not applied yet (newer ones do not count). */
export async function pendingMigrations(db: Kysely<Database>): Promise<string[]> {
  return (await schemaState(db)).pending;
}
