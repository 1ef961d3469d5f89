/** The names of this build's migrations, and names for migrations of a release after it. */
import { migrationProvider } from '../../src/storage/migrations/migration-provider.js';

/** Every migration this build knows, in the order they run (name order). */
export async function knownMigrations(): Promise<string[]> {
  return Object.keys(await migrationProvider.getMigrations()).sort();
}

/** A migration name that sorts after this build's last one, as the next release's would (`0019-…` → `0020-<what>`). */
export async function nameAfterLastMigration(what: string): Promise<string> {
  const last = (await knownMigrations()).at(-1) ?? '0000';
  return `${String(Number.parseInt(last.slice(0, 4), 10) + 1).padStart(4, '0')}-${what}`;
}
