/**
 * PostgreSQL (a server of the test's own) stopped for 8 s under load on two `unigate serve` instances: requests
 * admitted from what an instance holds are answered 200 while the database is away, and one instance is killed with
 * SIGKILL during the outage. Once the database is back (and the killed instance restarted), with no command run,
 * every answered request is charged exactly once with its usage row, the balance is the credit minus the usage
 * rows' costs to the nano-dollar, the ledger check passes and nothing is left in the instances' outboxes.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, killAll, withTimeout } from '../cli/cli-process.js';
import { startServeCluster, type ServeCluster, type ServeInstance } from '../serve-cluster.js';
import { createPrivatePostgresCluster, postgresBinaries, type PrivatePostgresCluster } from '../../support/private-postgres-cluster.js';

const MODEL = 'outage-model';
const YAML = [
  'models:',
  `  - { id: ${MODEL}, pricing: { input_per_mtok: 3, output_per_mtok: 15 } }`,
  'channels:',
  // Slow enough that the requests admitted just before the database stops are answered while it is away.
  `  - { name: outage-sim, type: simulator, models: [${MODEL}], settings: { output_tokens: 12, latency_ms: 1000 } }`,
];
const CREDIT_NANO = 100_000_000_000n;
const DOWN_MS = 8000;
const CALLERS_PER_INSTANCE = 6;

interface Outcome {
  instance: string;
  status: number;
  requestId: string | null;
  costNano: bigint | null;
  /** When the answer ended (performance.now()). */
  at: number;
}

type Row = Record<string, unknown>;

function usdToNano(text: string): bigint {
  const [whole = '0', fraction = ''] = text.split('.');
  return BigInt(whole) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0').slice(0, 9));
}

async function send(instance: ServeInstance, key: string): Promise<Outcome> {
  try {
    const response = await fetch(`${instance.url}/v1/chat/completions`, {
      method: 'POST',
      signal: AbortSignal.timeout(20_000),
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'summarise the quarterly report in one line' }], max_tokens: 12 }),
    });
    await response.arrayBuffer();
    const cost = response.headers.get('x-request-cost-usd');
    return { instance: instance.name, status: response.status, requestId: response.headers.get('x-request-id'), costNano: cost === null ? null : usdToNano(cost), at: performance.now() };
  } catch {
    return { instance: instance.name, status: 0, requestId: null, costNano: null, at: performance.now() };
  }
}

/** Callers on one instance until `stop.done`. */
function load(instance: ServeInstance, key: string, outcomes: Outcome[], stop: { done: boolean }): Promise<void> {
  return Promise.all(Array.from({ length: CALLERS_PER_INSTANCE }, async () => {
    for (let index = 0; !stop.done && index < 100_000; index += 1) {
      const outcome = await send(instance, key);
      outcomes.push(outcome);
      if (outcome.status !== 200) await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })).then(() => undefined);
}

async function waitFor<T>(what: string, read: () => Promise<T>, done: (value: T) => boolean, timeoutMs: number): Promise<T> {
  const started = Date.now();
  let value = await read();
  while (!done(value)) {
    if (Date.now() - started > timeoutMs) throw new Error(`timed out waiting for ${what}: ${Array.isArray(value) ? `${value.length} found` : JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
    value = await read();
  }
  return value;
}

/** Files kept in an instance's data directory for the database (settlements and usage rows not yet written). */
function keptFiles(cluster: ServeCluster, name: string): string[] {
  const found: string[] = [];
  const walk = (directory: string): void => {
    if (!existsSync(directory)) return;
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(path.join(directory, entry.name));
      else found.push(path.join(directory, entry.name));
    }
  };
  for (const folder of ['settlement-outbox', 'usage-dead-letter']) walk(path.join(cluster.directory, name, folder));
  return found;
}

describe.skipIf(postgresBinaries() === null)('settlements and usage rows across a PostgreSQL outage', () => {
  let server: PrivatePostgresCluster;
  let cluster: ServeCluster;
  let databaseUrl = '';

  beforeAll(async () => {
    server = await createPrivatePostgresCluster(await freePort());
    const admin = new pg.Client({ connectionString: server.url() });
    await admin.connect();
    await admin.query('CREATE DATABASE gateway');
    await admin.end();
    databaseUrl = server.url('gateway');
    cluster = await startServeCluster(0, YAML, { DATABASE_URL: databaseUrl });
    await cluster.start('steady', { INSTANCE_ID: 'outage-steady' });
    await cluster.start('killed', { INSTANCE_ID: 'outage-killed' });
  }, 120_000);

  afterAll(async () => {
    killAll();
    await cluster?.close();
    await server?.destroy();
  }, 60_000);

  async function query(text: string, parameters: unknown[] = []): Promise<Row[]> {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      return (await client.query(text, parameters)).rows as Row[];
    } finally {
      await client.end();
    }
  }

  async function newAccount(email: string): Promise<{ accountId: string; key: string }> {
    const account = await cluster.admin<{ id: string }>('POST', '/admin/accounts', { email });
    const accountId = account.body.id;
    expect((await cluster.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: Number(CREDIT_NANO) / 1e9 })).status).toBe(200);
    const key = (await cluster.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, {})).body.key;
    return { accountId, key };
  }

  /** Every answered request charged once at its quoted cost with its usage row; the books balance to the nano-dollar. */
  async function expectConverged(accountId: string, answered: Outcome[]): Promise<void> {
    const ids = answered.map((outcome) => outcome.requestId as string);
    const costs = new Map(answered.map((outcome) => [outcome.requestId as string, outcome.costNano as bigint]));
    expect([...costs.values()].every((cost) => cost > 0n)).toBe(true);
    const rows = await waitFor('a usage row of every answered request',
      () => query('select request_id, cost_nano from usage_logs where request_id = any($1)', [ids]), (found) => found.length === ids.length, 60_000);
    for (const row of rows) expect(BigInt(String(row.cost_nano)), String(row.request_id)).toBe(costs.get(String(row.request_id)));
    const entries = await waitFor('a ledger charge of every answered request',
      () => query('select request_id, amount_nano from ledger_entries where kind = \'usage\' and request_id = any($1)', [ids]), (found) => found.length >= ids.length, 60_000);
    expect(entries).toHaveLength(ids.length);
    for (const entry of entries) expect(-BigInt(String(entry.amount_nano)), String(entry.request_id)).toBe(costs.get(String(entry.request_id)));
    expect(await query('select request_id from ledger_entries where request_id is not null group by request_id having count(*) > 1')).toEqual([]);

    // The books balance to the nano-dollar: every charge has its usage row, and no usage row is uncharged.
    const [{ spent }] = await query('select coalesce(sum(cost_nano), 0) as spent from usage_logs where account_id = $1', [accountId]) as [{ spent: string }];
    const [{ charged }] = await query('select coalesce(sum(amount_nano), 0) as charged from ledger_entries where account_id = $1 and kind = \'usage\'', [accountId]) as [{ charged: string }];
    const [{ balance_nano: balance }] = await query('select balance_nano from accounts where id = $1', [accountId]) as [{ balance_nano: string }];
    expect(-BigInt(charged)).toBe(BigInt(spent));
    expect(BigInt(balance)).toBe(CREDIT_NANO - BigInt(spent));
    const check = await cluster.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${accountId}`);
    expect(check.body).toMatchObject({ ok: true, problems: [] });
  }

  it('every request answered 200 is charged once, by the gateway itself, after the database is back', async () => {
    const { accountId, key } = await newAccount('outage@example.com');
    const [steady, killed] = cluster.instances as [ServeInstance, ServeInstance];

    const outcomes: Outcome[] = [];
    const stopSteady = { done: false };
    const stopKilled = { done: false };
    const steadyLoad = load(steady, key, outcomes, stopSteady);
    const killedLoad = load(killed, key, outcomes, stopKilled);
    // Warm: both instances hold leases, and each has requests in flight when the database stops.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await server.stop();
    const downAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, DOWN_MS / 2 - 1000));
    // The instance to be killed stops answering a second before it dies: every answer it gave was settled.
    stopKilled.done = true;
    await killedLoad;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    killed.process.kill();
    await killed.process.exited;
    cluster.instances.splice(cluster.instances.indexOf(killed), 1);
    await new Promise((resolve) => setTimeout(resolve, DOWN_MS / 2));
    await server.start();
    const upAt = performance.now();
    stopSteady.done = true;
    await steadyLoad;
    // The killed instance comes back on its data directory and instance id; nobody runs a command.
    await cluster.start('killed', { INSTANCE_ID: 'outage-killed' });

    const answered = outcomes.filter((outcome) => outcome.status === 200);
    const whileDown = (name: string): number => answered.filter((outcome) => outcome.instance === name && outcome.at > downAt && outcome.at < upAt).length;
    console.log(`${outcomes.length} requests, ${answered.length} answered 200 (while the database was down: steady ${whileDown('steady')}, killed ${whileDown('killed')}), ${outcomes.filter((outcome) => outcome.status === 503).length} answered 503`);
    // Both instances answered requests the database could not settle at the time.
    expect(whileDown('steady')).toBeGreaterThan(0);
    expect(whileDown('killed')).toBeGreaterThan(0);
    expect(outcomes.filter((outcome) => ![200, 503].includes(outcome.status))).toEqual([]);

    await expectConverged(accountId, answered);
    await waitFor('empty outboxes', async () => [...keptFiles(cluster, 'steady'), ...keptFiles(cluster, 'killed')], (files) => files.length === 0, 30_000);
    for (const instance of cluster.instances) expect(instance.process.hasExited(), instance.name).toBe(false);
  }, 240_000);

  it('a clean stop while the database is away does not wait for it; the restart applies what it kept', async () => {
    const { accountId, key } = await newAccount('outage-stop@example.com');
    const stopping = cluster.instances.find((instance) => instance.name === 'killed') as ServeInstance;
    const outcomes: Outcome[] = [];
    const stop = { done: false };
    const running = load(stopping, key, outcomes, stop);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    await server.stop();
    const downAt = performance.now();
    await new Promise((resolve) => setTimeout(resolve, 2000));
    stop.done = true;
    await running;
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const stoppedAt = performance.now();
    process.kill(stopping.process.pid, 'SIGTERM');
    const exit = await withTimeout(stopping.process.exited, 30_000, 'a clean stop with the database away');
    const stopMs = performance.now() - stoppedAt;
    cluster.instances.splice(cluster.instances.indexOf(stopping), 1);
    console.log(`stopped in ${Math.round(stopMs)} ms with the database away`);
    expect(exit.code).toBe(0);
    expect(stopMs).toBeLessThan(20_000);
    expect(keptFiles(cluster, 'killed').length).toBeGreaterThan(0);
    await server.start();
    await cluster.start('killed', { INSTANCE_ID: 'outage-killed' });
    const answered = outcomes.filter((outcome) => outcome.status === 200);
    expect(answered.filter((outcome) => outcome.at > downAt).length).toBeGreaterThan(0);
    expect(outcomes.filter((outcome) => ![200, 503].includes(outcome.status))).toEqual([]);
    await expectConverged(accountId, answered);
    await waitFor('empty outboxes', async () => keptFiles(cluster, 'killed'), (files) => files.length === 0, 30_000);
  }, 240_000);
});
