/**
 * A build against a schema a newer release migrated, on both databases: it applies nothing, names the newer
 * migrations, and counts nothing as pending; a schema with a migration unknown to the build among its own, or
 * missing one of the build's while a newer one is applied, is refused.
 */
import { type Kysely, sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { migrateToLatest, pendingMigrations } from '../../src/storage/migrate.js';
import type { Database } from '../../src/storage/database-schema.js';
import { knownMigrations, nameAfterLastMigration } from '../support/migration-names.js';
import { migrationDatabases, postgresAvailable } from './migration-databases.js';

const databases = migrationDatabases();

afterEach(() => databases.cleanup());

const record = (db: Kysely<Database>, name: string): Promise<unknown> =>
  sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(db);
const forget = (db: Kysely<Database>, name: string): Promise<unknown> => sql`delete from kysely_migration where name = ${name}`.execute(db);

async function checkSchemaAhead(db: Kysely<Database>): Promise<void> {
  expect(await migrateToLatest(db)).toEqual({ applied: await knownMigrations(), newer: [] });
  expect(await migrateToLatest(db)).toEqual({ applied: [], newer: [] });

  const newer = await nameAfterLastMigration('next-release');
  await record(db, newer);
  expect(await migrateToLatest(db)).toEqual({ applied: [], newer: [newer] });
  expect(await pendingMigrations(db)).toEqual([]);

  // The build's last migration missing while a newer one is applied: not a schema a release line produces.
  const last = (await knownMigrations()).at(-1) ?? '';
  await forget(db, last);
  expect(await pendingMigrations(db)).toEqual([last]);
  await expect(migrateToLatest(db)).rejects.toThrow(`previously executed migration ${newer} is missing`);
  await record(db, last);

  const foreign = `${(await knownMigrations())[0] ?? ''}-another-branch`;
  await record(db, foreign);
  await expect(migrateToLatest(db)).rejects.toThrow(`previously executed migration ${foreign} is missing from this build`);
}

describe('a schema ahead of the build', () => {
  it('on SQLite', async () => {
    await checkSchemaAhead(await databases.sqlite());
  });

  it.skipIf(!postgresAvailable)('on PostgreSQL', async () => {
    await checkSchemaAhead(await databases.postgres());
  });
});
