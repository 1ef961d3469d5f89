import { Migrator } from 'kysely';
import type { Kysely } from 'kysely';
import type { Database } from './database-schema.js';
import { migrationProvider } from './migrations/migration-provider.js';

/** Brings the schema to the latest migration (a no-op when it already is). Throws if a migration fails. */
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
