import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config/load-config.js';
import { startGateway, type RunningGateway } from '../../src/gateway.js';
import type { Clock } from '../../src/shared/clock.js';
import { createLogger } from '../../src/shared/logger.js';
import { createThrowawayPostgresDatabase, isPostgresUrl } from './postgres-test-database.js';

export interface TestGateway {
  /** API root, e.g. http://127.0.0.1:PORT */
  url: string;
  /** The OpenAI SDK base URL: url + /v1 */
  baseURL: string;
  consoleUrl: string;
  adminToken: string;
  dataDirectory: string;
  databaseUrl: string;
  gateway: RunningGateway;
  /** Every log line the gateway wrote. */
  logs: string[];
  admin<T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }>;
  close(): Promise<void>;
}

export interface TestGatewayOptions {
  /** Extra environment (PORT, DATABASE_URL, … are chosen by the harness unless given here). */
  env?: Record<string, string>;
  clock?: Clock;
  /** Use PostgreSQL when TEST_DATABASE_URL is a postgres URL (the default), or force SQLite. */
  database?: 'auto' | 'sqlite';
}

/** The database the suite runs against: SQLite by default, PostgreSQL when TEST_DATABASE_URL says so. */
export function suiteDatabase(): 'sqlite' | 'postgres' {
  return isPostgresUrl(process.env.TEST_DATABASE_URL) ? 'postgres' : 'sqlite';
}

/** Starts a real gateway in this process on 127.0.0.1 with random ports and a throw-away database. */
export async function startTestGateway(options: TestGatewayOptions = {}): Promise<TestGateway> {
  const dataDirectory = await mkdtemp(path.join(tmpdir(), 'unigate-test-'));
  const adminToken = `adm_test_${randomBytes(12).toString('hex')}`;
  const postgres = options.database !== 'sqlite' && suiteDatabase() === 'postgres' && options.env?.DATABASE_URL === undefined
    ? await createThrowawayPostgresDatabase()
    : null;
  const env: Record<string, string> = {
    HOST: '127.0.0.1',
    PORT: '0',
    CONSOLE_PORT: '0',
    ADMIN_TOKEN: adminToken,
    DATA_DIR: dataDirectory,
    DATABASE_URL: postgres?.url ?? `sqlite:${path.join(dataDirectory, 'gateway.db')}`,
    // Every test calls from 127.0.0.1 and many send wrong credentials on purpose; the limit has tests of its own.
    AUTH_FAILURE_LIMIT: '1000000',
    // The gateway shares its event loop with the test code on a busy test machine: shedding on that loop's delay
    // would refuse test requests for reasons of the tests, not of the load. Overload has tests of its own.
    ADMISSION_QUEUE_TARGET_MS: '0',
    ...options.env,
  };
  const logs: string[] = [];
  const config = loadConfig(env, dataDirectory);
  let gateway: RunningGateway;
  try {
    gateway = await startGateway(config, {
      logger: createLogger('debug', (line) => logs.push(line)),
      env,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
    });
  } catch (error) {
    await postgres?.drop();
    await rm(dataDirectory, { recursive: true, force: true });
    throw error;
  }
  const admin = async <T>(method: string, route: string, body?: unknown): Promise<{ status: number; body: T; headers: Headers }> => {
    const response = await fetch(gateway.apiUrl + route, {
      method,
      headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text === '' ? {} : JSON.parse(text)) as T, headers: response.headers };
  };
  let closed = false;
  return {
    url: gateway.apiUrl,
    baseURL: `${gateway.apiUrl}/v1`,
    consoleUrl: gateway.consoleUrl,
    adminToken,
    dataDirectory,
    databaseUrl: env.DATABASE_URL as string,
    gateway,
    logs,
    admin,
    async close() {
      if (closed) return;
      closed = true;
      await gateway.close();
      await postgres?.drop();
      await rm(dataDirectory, { recursive: true, force: true });
    },
  };
}

export interface SeededAccount {
  accountId: string;
  keyId: string;
  key: string;
}

/** An account with `balanceUsd` credited and one key with the given attributes. */
export async function seedAccount(gateway: TestGateway, options: { balanceUsd?: number; email?: string; key?: Record<string, unknown> } = {}): Promise<SeededAccount> {
  const email = options.email ?? `user-${randomBytes(6).toString('hex')}@example.com`;
  const account = await gateway.admin<{ id: string }>('POST', '/admin/accounts', { email });
  if (account.status !== 201) throw new Error(`account creation failed: ${JSON.stringify(account.body)}`);
  if ((options.balanceUsd ?? 10) !== 0) {
    const credit = await gateway.admin('POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: options.balanceUsd ?? 10 });
    if (credit.status !== 200) throw new Error(`credit failed: ${JSON.stringify(credit.body)}`);
  }
  const key = await gateway.admin<{ id: string; key: string }>('POST', `/admin/accounts/${account.body.id}/keys`, options.key ?? {});
  if (key.status !== 201) throw new Error(`key creation failed: ${JSON.stringify(key.body)}`);
  return { accountId: account.body.id, keyId: key.body.id, key: key.body.key };
}

/** A model with a price and a channel serving it. */
export async function addRoutedModel(
  gateway: TestGateway,
  options: { model: string; channel: Record<string, unknown>; pricing?: Record<string, number>; kind?: string },
): Promise<{ channelId: string }> {
  const model = await gateway.admin('POST', '/admin/models', { id: options.model, pricing: options.pricing ?? { input_per_mtok: 1, output_per_mtok: 2 }, ...(options.kind === undefined ? {} : { kind: options.kind }) });
  if (model.status !== 201 && model.status !== 409) throw new Error(`model creation failed: ${JSON.stringify(model.body)}`);
  const channel = await gateway.admin<{ id: string }>('POST', '/admin/channels', options.channel);
  if (channel.status !== 201) throw new Error(`channel creation failed: ${JSON.stringify(channel.body)}`);
  return { channelId: channel.body.id };
}

/** Waits until queued usage rows and charges are written. */
export async function flushWrites(gateway: TestGateway): Promise<void> {
  await gateway.gateway.services.ledger.flush();
  await gateway.gateway.services.usageLog.flush();
}
