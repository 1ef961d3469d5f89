/**
 * Migrations with real processes: several `unigate migrate` started at the same moment on one fresh database all
 * succeed and apply each migration once (PostgreSQL advisory lock, SQLite immediate transaction); a serve with
 * MIGRATE_ON_START=false refuses a stale schema and starts (ready) once `unigate migrate` ran.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suiteDatabase } from '../../support/gateway-harness.js';
import { createThrowawayPostgresDatabase, type ThrowawayPostgresDatabase } from '../../support/postgres-test-database.js';
import { createPostgresDialect, openSqlite } from '../../../src/storage/dialects.js';
import { migrationProvider } from '../../../src/storage/migrations/migration-provider.js';
import { assertBuilt, cleanEnv, freePort, killAll, runCommand, startCommand, waitForHttp } from './cli-process.js';

const PARALLEL = 4;

async function appliedMigrations(databaseUrl: string): Promise<string[]> {
  const dialect = databaseUrl.startsWith('sqlite:') ? openSqlite(databaseUrl.slice('sqlite:'.length)).dialect : createPostgresDialect(databaseUrl);
  const db = new Kysely<Record<string, never>>({ dialect });
  try {
    const rows = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
    return rows.rows.map((row) => row.name);
  } finally {
    await db.destroy();
  }
}

describe('migrations', () => {
  let directory: string;
  let postgres: ThrowawayPostgresDatabase | null = null;
  const freshDatabase = async (name: string): Promise<string> => {
    if (suiteDatabase() === 'postgres') {
      postgres = await createThrowawayPostgresDatabase();
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
    await (postgres as ThrowawayPostgresDatabase | null)?.drop();
    await rm(directory, { recursive: true, force: true });
  });

  it(`${PARALLEL} migrate commands started together on a fresh database all succeed and apply each migration once`, async () => {
    const databaseUrl = await freshDatabase('parallel');
    const env = cleanEnv({ DATABASE_URL: databaseUrl, DATA_DIR: path.join(directory, 'data'), LOG_LEVEL: 'warn' });
    const results = await Promise.all(Array.from({ length: PARALLEL }, () => runCommand(['migrate'], directory, env, 60_000)));
    for (const result of results) expect(result.code, result.stderr).toBe(0);
    const known = Object.keys(await migrationProvider.getMigrations()).sort();
    expect(await appliedMigrations(databaseUrl)).toEqual(known);
  }, 90_000);

  it('MIGRATE_ON_START=false refuses a schema that is not current, and serves (ready) after unigate migrate', async () => {
    await (postgres as ThrowawayPostgresDatabase | null)?.drop();
    postgres = null;
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
    const server = startCommand(['serve'], directory, env);
    try {
      await waitForHttp(`http://127.0.0.1:${port}/readyz`, server, 20_000);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: 'ok', migrations: 'current', draining: false } });
    } finally {
      server.kill();
      await server.exited;
    }
  }, 120_000);
});
