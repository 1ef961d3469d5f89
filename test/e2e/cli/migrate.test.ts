/**
 * Migrations with real processes: several `unigate migrate` started at the same moment on one fresh database all
 * succeed and apply each migration once (PostgreSQL advisory lock, SQLite immediate transaction); a serve with
 * MIGRATE_ON_START=false refuses a stale schema and starts (ready) once `unigate migrate` ran; a schema a newer
 * release migrated is one this build migrates no further and serves on, while a schema with a migration unknown to
 * the build among its own, or missing one of the build's before later ones, is refused.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suiteDatabase } from '../../support/gateway-harness.js';
import { createThrowawayPostgresDatabase, type ThrowawayPostgresDatabase } from '../../support/postgres-test-database.js';
import { createPostgresDialect, openSqlite } from '../../../src/storage/dialects.js';
import { knownMigrations, nameAfterLastMigration } from '../../support/migration-names.js';
import { assertBuilt, cleanEnv, freePort, killAll, runCommand, startCommand, waitForHttp } from './cli-process.js';

const PARALLEL = 4;

async function withDatabase<T>(databaseUrl: string, work: (db: Kysely<Record<string, never>>) => Promise<T>): Promise<T> {
  const dialect = databaseUrl.startsWith('sqlite:') ? openSqlite(databaseUrl.slice('sqlite:'.length)).dialect : createPostgresDialect(databaseUrl);
  const db = new Kysely<Record<string, never>>({ dialect });
  try {
    return await work(db);
  } finally {
    await db.destroy();
  }
}

async function appliedMigrations(databaseUrl: string): Promise<string[]> {
  return withDatabase(databaseUrl, async (db) => (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db)).rows.map((row) => row.name));
}

/** Records a migration as applied, as the migrator of the release that has it does. */
async function recordMigration(databaseUrl: string, name: string): Promise<void> {
  await withDatabase(databaseUrl, (db) => sql`insert into kysely_migration (name, timestamp) values (${name}, ${new Date().toISOString()})`.execute(db));
}

async function forgetMigration(databaseUrl: string, name: string): Promise<void> {
  await withDatabase(databaseUrl, (db) => sql`delete from kysely_migration where name = ${name}`.execute(db));
}

/** `unigate serve` in `directory` with `env` starts and reports ready: database up, every migration of the build applied. */
async function expectServesReady(directory: string, env: Record<string, string>, port: number): Promise<void> {
  const server = startCommand(['serve'], directory, env);
  try {
    await waitForHttp(`http://127.0.0.1:${port}/readyz`, server, 20_000);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', migrations: 'current', draining: false } });
  } finally {
    server.kill();
    await server.exited;
  }
}

describe('migrations', () => {
  let directory: string;
  const postgresDatabases: ThrowawayPostgresDatabase[] = [];
  const freshDatabase = async (name: string): Promise<string> => {
    if (suiteDatabase() === 'postgres') {
      const postgres = await createThrowawayPostgresDatabase();
      postgresDatabases.push(postgres);
      return postgres.url;
    }
    return `sqlite:${path.join(directory, `${name}.db`)}`;
  };

  beforeAll(async () => {
    assertBuilt();
    directory = await mkdtemp(path.join(tmpdir(), 'unigate-migrate-'));
  });

  afterAll(async () => {
    killAll();
    await Promise.all(postgresDatabases.map((database) => database.drop()));
    await rm(directory, { recursive: true, force: true });
  });

  it(`${PARALLEL} migrate commands started together on a fresh database all succeed and apply each migration once`, async () => {
    const databaseUrl = await freshDatabase('parallel');
    const env = cleanEnv({ DATABASE_URL: databaseUrl, DATA_DIR: path.join(directory, 'data'), LOG_LEVEL: 'warn' });
    const results = await Promise.all(Array.from({ length: PARALLEL }, () => runCommand(['migrate'], directory, env, 60_000)));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    expect(await appliedMigrations(databaseUrl)).toEqual(await knownMigrations());
  }, 90_000);

  it('MIGRATE_ON_START=false refuses a schema that is not current, and serves (ready) after unigate migrate', async () => {
    const databaseUrl = await freshDatabase('deploy');
    const port = await freePort();
    const env = cleanEnv({
      DATABASE_URL: databaseUrl, DATA_DIR: path.join(directory, 'deploy-data'), LOG_LEVEL: 'warn', MIGRATE_ON_START: 'false',
      HOST: '127.0.0.1', PORT: String(port), CONSOLE_PORT: String(await freePort()), ADMIN_TOKEN: 'adm_test_0123456789abcdef0123',
    });
    const refused = await runCommand(['serve'], directory, env, 30_000);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('unigate migrate');

    const migrated = await runCommand(['migrate'], directory, env, 60_000);
    expect(migrated.code, migrated.stderr).toBe(0);
    await expectServesReady(directory, env, port);
  }, 120_000);

  it('against a schema a newer release migrated, migrate applies nothing and says so, and serve starts ready', async () => {
    const databaseUrl = await freshDatabase('ahead');
    const port = await freePort();
    const env = cleanEnv({
      DATABASE_URL: databaseUrl, DATA_DIR: path.join(directory, 'ahead-data'), LOG_LEVEL: 'warn',
      HOST: '127.0.0.1', PORT: String(port), CONSOLE_PORT: String(await freePort()), ADMIN_TOKEN: 'adm_test_0123456789abcdef0123',
    });
    const first = await runCommand(['migrate'], directory, env, 60_000);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain('migrations applied: 0001-initial');
    const known = await knownMigrations();
    const newer = await nameAfterLastMigration('from-the-next-release');
    await recordMigration(databaseUrl, newer);

    const again = await runCommand(['migrate'], directory, env, 60_000);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('no migration to apply');
    expect(again.stdout).toContain(`the schema is ahead of this build (applied by a newer release: ${newer})`);
    expect(await appliedMigrations(databaseUrl)).toEqual([...known, newer]);

    await expectServesReady(directory, env, port);
  }, 120_000);

  it('refuses a schema with a migration unknown to this build among its own, or missing one of its migrations before later ones', async () => {
    const databaseUrl = await freshDatabase('refused');
    const env = cleanEnv({ DATABASE_URL: databaseUrl, DATA_DIR: path.join(directory, 'refused-data'), LOG_LEVEL: 'warn' });
    expect((await runCommand(['migrate'], directory, env, 60_000)).code).toBe(0);
    const known = await knownMigrations();
    const [firstKnown, secondKnown] = known;
    if (firstKnown === undefined || secondKnown === undefined) throw new Error('fewer than two migrations');

    const foreign = `${firstKnown}-from-another-branch`;
    await recordMigration(databaseUrl, foreign);
    const unknownAmongOwn = await runCommand(['migrate'], directory, env, 60_000);
    expect(unknownAmongOwn.code).toBe(1);
    expect(unknownAmongOwn.stderr).toContain(`previously executed migration ${foreign} is missing`);
    await forgetMigration(databaseUrl, foreign);

    await forgetMigration(databaseUrl, secondKnown);
    const missingOwn = await runCommand(['migrate'], directory, env, 60_000);
    expect(missingOwn.code).toBe(1);
    expect(missingOwn.stderr).toContain('corrupted migrations');
    expect(await appliedMigrations(databaseUrl)).toEqual(known.filter((name) => name !== secondKnown));
  }, 120_000);
});
