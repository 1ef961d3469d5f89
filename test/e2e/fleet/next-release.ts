/**
 * "The next release" for upgrade tests: this build plus one more migration, made the way a release is made, without
 * anything in the production code to find it. The built `dist/` is copied to a directory of its own with the
 * package's `bin/unigate.js` and `package.json` (its modules resolve their dependencies through a link to this
 * repository's node_modules), a compiled migration module is added beside the others, and the copy's migration
 * provider becomes one that lists the released migrations and the new one.
 */
import { cp, mkdir, mkdtemp, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { nameAfterLastMigration } from '../../support/migration-names.js';
import { assertBuilt, REPO_ROOT } from '../cli/cli-process.js';

export interface NextRelease {
  /** Its `bin/unigate.js`, to start it with. */
  bin: string;
  /** The name of the migration it adds. */
  migration: string;
  remove(): Promise<void>;
}

/**
 * The change a release would make between two others: expand-only, so the release before it runs on the new schema.
 * `accounts.email_domain`, backfilled and indexed, for finding accounts by domain; `usage_logs.client_region`, empty
 * until the release fills it. The backfill is PostgreSQL's (the fleet's database).
 */
const MIGRATION_MODULE = `import { sql } from 'kysely';

export async function up(db) {
  await db.schema.alterTable('accounts').addColumn('email_domain', 'text').execute();
  await sql\`update accounts set email_domain = lower(split_part(email, '@', 2)) where email_domain is null\`.execute(db);
  await db.schema.createIndex('accounts_email_domain').on('accounts').column('email_domain').execute();
  await db.schema.alterTable('usage_logs').addColumn('client_region', 'text').execute();
}

export async function down(db) {
  await db.schema.alterTable('usage_logs').dropColumn('client_region').execute();
  await db.schema.dropIndex('accounts_email_domain').execute();
  await db.schema.alterTable('accounts').dropColumn('email_domain').execute();
}
`;

/** The migration provider of the next release: the released one's migrations and the new one. */
function providerModule(migration: string): string {
  return `import { migrationProvider as released } from './migration-provider-released.js';
import * as next from './${migration}.js';

export const migrationProvider = {
  getMigrations: async () => ({ ...(await released.getMigrations()), '${migration}': next }),
};
`;
}

export async function buildNextRelease(): Promise<NextRelease> {
  assertBuilt();
  const directory = await mkdtemp(path.join(tmpdir(), 'unigate-next-release-'));
  for (const part of ['dist/src', 'dist/web']) await cp(path.join(REPO_ROOT, part), path.join(directory, part), { recursive: true });
  await mkdir(path.join(directory, 'bin'));
  await cp(path.join(REPO_ROOT, 'bin', 'unigate.js'), path.join(directory, 'bin', 'unigate.js'));
  await cp(path.join(REPO_ROOT, 'package.json'), path.join(directory, 'package.json'));
  await symlink(path.join(REPO_ROOT, 'node_modules'), path.join(directory, 'node_modules'), 'dir');

  const migration = await nameAfterLastMigration('account-email-domains');
  const migrations = path.join(directory, 'dist', 'src', 'storage', 'migrations');
  await writeFile(path.join(migrations, `${migration}.js`), MIGRATION_MODULE);
  await rename(path.join(migrations, 'migration-provider.js'), path.join(migrations, 'migration-provider-released.js'));
  await writeFile(path.join(migrations, 'migration-provider.js'), providerModule(migration));
  return {
    bin: path.join(directory, 'bin', 'unigate.js'),
    migration,
    remove: () => rm(directory, { recursive: true, force: true }),
  };
}
