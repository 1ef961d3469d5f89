/** Real `unigate serve` processes on one database (SQLite file or a throwaway PostgreSQL), for the multi-instance tests. */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openSqliteConnection } from '../../src/storage/sqlite-connection.js';
import { suiteDatabase } from '../support/gateway-harness.js';
import { createThrowawayPostgresDatabase, type ThrowawayPostgresDatabase } from '../support/postgres-test-database.js';
import { call, type HttpAnswer } from './admin/helpers.js';
import { assertBuilt, cleanEnv, freePort, startCommand, waitForHttp, type RunningCommand } from './cli/cli-process.js';

export interface ServeInstance {
  url: string;
  process: RunningCommand;
  name: string;
  port: number;
  consolePort: number;
}

export interface ServeCluster {
  directory: string;
  databaseUrl: string;
  adminToken: string;
  environment: Record<string, string>;
  instances: ServeInstance[];
  /** Starts an instance of this build, or of the release whose `bin/unigate.js` is `bin`. */
  start(name: string, extra?: Record<string, string>, port?: number, consolePort?: number, bin?: string): Promise<ServeInstance>;
  admin<T = Record<string, unknown>>(method: string, route: string, body?: unknown, instance?: number): Promise<HttpAnswer<T>>;
  close(): Promise<void>;
}

export interface ServeClusterOptions {
  /** The database: the suite's (SQLite unless TEST_DATABASE selects PostgreSQL) or always a PostgreSQL database of its own. */
  database?: 'suite' | 'postgres';
}

/** Rows read straight from the cluster's database (SQLite file or PostgreSQL); `$n` parameters on both. */
export async function queryClusterDatabase(databaseUrl: string, sqlText: string, parameters: string[]): Promise<Array<Record<string, unknown>>> {
  if (databaseUrl.startsWith('sqlite:')) {
    const database = openSqliteConnection(databaseUrl.slice('sqlite:'.length), { mustExist: true, readOnly: true });
    try {
      return database.prepare(sqlText.replace(/\$\d+/g, '?')).all(...parameters) as Array<Record<string, unknown>>;
    } finally {
      database.close();
    }
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(sqlText, parameters)).rows as Array<Record<string, unknown>>;
  } finally {
    await client.end();
  }
}

/** Writes gateway.yaml, prepares the database, and starts `count` instances one after the other. */
export async function startServeCluster(count: number, yaml: string[], extraEnvironment: Record<string, string> = {}, options: ServeClusterOptions = {}): Promise<ServeCluster> {
  assertBuilt();
  const directory = await mkdtemp(path.join(tmpdir(), 'unigate-cluster-'));
  await writeFile(path.join(directory, 'gateway.yaml'), [...yaml, ''].join('\n'));
  const usePostgres = options.database === 'postgres' || suiteDatabase() === 'postgres';
  const postgres: ThrowawayPostgresDatabase | null = usePostgres ? await createThrowawayPostgresDatabase() : null;
  const adminToken = `adm_test_${randomBytes(12).toString('hex')}`;
  const databaseUrl = postgres?.url ?? `sqlite:${path.join(directory, 'shared.db')}`;
  const environment = {
    HOST: '127.0.0.1',
    ADMIN_TOKEN: adminToken,
    SECRET_KEY: randomBytes(32).toString('hex'),
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    AUTH_FAILURE_LIMIT: '1000000',
    ...extraEnvironment,
  };
  const instances: ServeInstance[] = [];
  const cluster: ServeCluster = {
    directory,
    databaseUrl,
    adminToken,
    environment,
    instances,
    async start(name, extra = {}, fixedPort, fixedConsolePort, bin) {
      // A port found free can be taken by a parallel test file before the instance binds it: then the instance
      // exits with EADDRINUSE, and it starts again on other ports (ports given by the caller are not changed).
      for (let attempt = 1; ; attempt += 1) {
        const port = fixedPort ?? (await freePort());
        let consolePort = fixedConsolePort ?? (await freePort());
        while (consolePort === port) consolePort = await freePort();
        const child = startCommand(['serve'], directory, cleanEnv({ ...environment, ...extra, PORT: String(port), CONSOLE_PORT: String(consolePort), DATA_DIR: path.join(directory, name) }), bin);
        const url = `http://127.0.0.1:${port}`;
        try {
          // Bounded generously: the fleet tests start instances while others run under load on a shared machine.
          await waitForHttp(`${url}/api/status`, child, 40_000);
        } catch (error) {
          const portTaken = child.hasExited() && child.stderr().includes('EADDRINUSE');
          if (!portTaken || (fixedPort !== undefined && fixedConsolePort !== undefined) || attempt >= 3) throw error;
          continue;
        }
        const instance = { url, process: child, name, port, consolePort };
        instances.push(instance);
        return instance;
      }
    },
    admin(method, route, body, instance = 0) {
      const target = instances[instance] ?? instances[0];
      if (target === undefined) throw new Error('no instance running');
      return call(target.url, method, route, { token: adminToken, ...(body === undefined ? {} : { body }) });
    },
    async close() {
      for (const instance of instances) instance.process.kill();
      await Promise.all(instances.map((instance) => instance.process.exited));
      await postgres?.drop();
      await rm(directory, { recursive: true, force: true });
    },
  };
  for (let index = 0; index < count; index += 1) await cluster.start(`instance-${index}`);
  return cluster;
}

export interface LedgerEntryJson {
  id: string;
  kind: string;
  amount_usd: number;
  key_id: string | null;
  request_id: string | null;
}

/** Every ledger entry of an account (all pages). */
export async function ledgerEntries(cluster: ServeCluster, accountId: string): Promise<LedgerEntryJson[]> {
  const entries: LedgerEntryJson[] = [];
  let after: string | null = null;
  for (let page = 0; page < 100; page += 1) {
    const answer: HttpAnswer<{ data: LedgerEntryJson[]; has_more: boolean; next_cursor?: string | null; last_id?: string | null }> = await cluster.admin('GET', `/admin/accounts/${accountId}/ledger?limit=200${after === null ? '' : `&after=${after}`}`);
    if (answer.status !== 200) throw new Error(`ledger read failed: ${answer.text}`);
    entries.push(...answer.body.data);
    if (!answer.body.has_more) break;
    after = answer.body.data.at(-1)?.id ?? null;
  }
  return entries;
}

/** Nano-USD from a JSON USD number (exact for the amounts these tests use). */
export function nano(usd: number): bigint {
  return BigInt(Math.round(usd * 1e9));
}
