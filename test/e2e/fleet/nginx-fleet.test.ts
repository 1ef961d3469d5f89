/**
 * Three gateway processes behind Debian's nginx (deploy/nginx/unigate.conf), on one PostgreSQL database and one
 * Redis: money exact under concurrent spending spread over every instance; an admin change in effect on every
 * instance by the time the admin call returns; a rolling restart (SIGTERM each instance in turn, restart it) under
 * constant load, streams included, in which the load sees no failed request; and, the same way, a rolling upgrade to
 * the next release, which adds a migration that the release before it runs on.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nginxAvailable } from '../../support/nginx-balancer.js';
import { redisServerAvailable } from '../../support/private-redis-server.js';
import { call, type HttpAnswer } from '../admin/helpers.js';
import { killAll, waitUntil } from '../cli/cli-process.js';
import { ledgerEntries, nano, type LedgerEntryJson } from '../serve-cluster.js';
import { startConstantLoad } from './constant-load.js';
import { readyzStatus, startFleetTopology, type FleetTopology } from './fleet-topology.js';
import { buildNextRelease } from './next-release.js';

const canRun = nginxAvailable() && (process.env.TEST_REDIS_URL !== undefined || redisServerAvailable());
// Longer than nginx's upstream keepalive_timeout (3 s), as deploy/compose.yaml's 5 s is.
const DRAIN_SECONDS = 4;
const LOAD_MODELS = { unary: 'fleet-chat', stream: 'fleet-stream' };

describe.skipIf(!canRun)('a fleet of three behind nginx', () => {
  let fleet: FleetTopology;

  beforeAll(async () => {
    fleet = await startFleetTopology(3, [
      'models:',
      '  - { id: fleet-chat, pricing: { input_per_mtok: 1000, output_per_mtok: 1000 } }',
      '  - { id: fleet-stream, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }',
      '  - { id: fleet-slow, pricing: { input_per_mtok: 1, output_per_mtok: 1 } }',
      'channels:',
      '  - { name: fleet-chat, type: simulator, models: [fleet-chat], settings: { output_tokens: 4, latency_ms: 20 } }',
      '  - { name: fleet-stream, type: simulator, models: [fleet-stream], settings: { output_tokens: 12, chunk_delay_ms: 60 } }',
      '  - { name: fleet-slow, type: simulator, models: [fleet-slow], settings: { output_tokens: 12, chunk_delay_ms: 250 } }',
    ], { DRAIN_SECONDS: String(DRAIN_SECONDS) });
  }, 90_000);

  afterAll(async () => {
    killAll();
    await fleet?.close();
  });

  const admin = <T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<HttpAnswer<T>> =>
    call<T>(fleet.nginx.apiUrl, method, route, { token: fleet.cluster.adminToken, ...(body === undefined ? {} : { body }) });

  async function newAccount(credit: number, keyLimits: Record<string, number> = {}): Promise<{ accountId: string; key: string; keyId: string }> {
    const account = await admin<{ id: string }>('POST', '/admin/accounts', { email: `fleet-${randomBytes(5).toString('hex')}@example.com` });
    expect(account.status, account.text).toBe(201);
    expect((await admin('POST', `/admin/accounts/${account.body.id}/credits`, { amount_usd: credit })).status).toBe(200);
    const key = await admin<{ id: string; key: string }>('POST', `/admin/accounts/${account.body.id}/keys`, keyLimits);
    expect(key.status, key.text).toBe(201);
    return { accountId: account.body.id, key: key.body.key, keyId: key.body.id };
  }

  const chat = (baseUrl: string, key: string, model = 'fleet-chat'): Promise<HttpAnswer> =>
    call(baseUrl, 'POST', '/v1/chat/completions', { token: key, body: { model, max_tokens: 8, messages: [{ role: 'user', content: 'hello fleet' }] } });

  /** Chat requests an instance answered, whatever the status. */
  async function handledChats(baseUrl: string): Promise<number> {
    const metrics = await call(baseUrl, 'GET', '/metrics', { token: fleet.cluster.adminToken });
    const lines = metrics.text.split('\n').filter((entry) => entry.startsWith('unigate_requests_total{') && entry.includes('endpoint="chat.completions"'));
    return lines.reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
  }

  async function query<Row>(text: string, values: unknown[] = []): Promise<Row[]> {
    const client = new pg.Client({ connectionString: fleet.cluster.databaseUrl });
    await client.connect();
    try {
      return (await client.query(text, values)).rows as Row[];
    } finally {
      await client.end();
    }
  }
  const migrationRows = async (name: string): Promise<number> =>
    (await query<{ name: string }>('select name from kysely_migration where name = $1', [name])).length;
  const columnsOf = async (table: string): Promise<string[]> =>
    (await query<{ column_name: string }>('select column_name from information_schema.columns where table_name = $1', [table])).map((row) => row.column_name);
  const emailDomainOf = async (accountId: string): Promise<string | null> =>
    (await query<{ email_domain: string | null }>('select email_domain from accounts where id = $1', [accountId]))[0]?.email_domain ?? null;

  /**
   * The ledger of the account checks out on every instance, it holds one usage entry per request served, and each
   * of those has its usage row. Returns the usage entries.
   */
  async function expectEveryChargeAccounted(accountId: string, served: number): Promise<LedgerEntryJson[]> {
    // Each instance writes its own charges and usage rows in batches: asking each flushes its queues first.
    for (const instance of fleet.instances) {
      const check = await call<{ ok: boolean; problems: unknown[] }>(instance.url, 'GET', `/admin/ledger/check?account_id=${accountId}`, { token: fleet.cluster.adminToken });
      expect(check.body.ok, JSON.stringify(check.body.problems)).toBe(true);
      expect((await call(instance.url, 'GET', `/admin/usage?account_id=${accountId}&limit=1`, { token: fleet.cluster.adminToken })).status).toBe(200);
    }
    const usage = (await ledgerEntries(fleet.cluster, accountId)).filter((entry) => entry.kind === 'usage');
    expect(usage).toHaveLength(served);
    const rows = new Set((await query<{ request_id: string }>('select request_id from usage_logs where account_id = $1', [accountId])).map((row) => row.request_id));
    const missing = usage.filter((entry) => !rows.has(entry.request_id ?? '')).map((entry) => entry.request_id);
    expect(missing, 'charges without a usage row').toEqual([]);
    return usage;
  }

  it('keeps money exact under concurrent spending spread over every instance', async () => {
    const credit = 0.2;
    const { accountId, key } = await newAccount(credit);
    // Every instance takes part; which of them hold the account's money (and answer 200 rather than 402) is theirs.
    const before = await Promise.all(fleet.instances.map((instance) => handledChats(instance.url)));
    const answers = await Promise.all(Array.from({ length: 60 }, () => chat(fleet.nginx.apiUrl, key)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.every((status) => status === 200 || status === 402), JSON.stringify(statuses)).toBe(true);
    const served = statuses.filter((status) => status === 200).length;
    expect(served).toBeGreaterThan(0);
    expect(statuses).toContain(402);
    const after = await Promise.all(fleet.instances.map((instance) => handledChats(instance.url)));
    expect(after.map((count, index) => count - (before[index] ?? 0)).every((count) => count > 0)).toBe(true);

    const usage = await expectEveryChargeAccounted(accountId, served);
    const account = await admin<{ balance_usd: number }>('GET', `/admin/accounts/${accountId}`);
    const balance = nano(account.body.balance_usd);
    expect(balance >= 0n).toBe(true);
    expect(balance).toBe(nano(credit) + usage.reduce((sum, entry) => sum + nano(entry.amount_usd), 0n));
  });

  it('holds a key to its RPM, TPM and concurrency exactly across the three instances', async () => {
    const streamed = (key: string, maxTokens: number): Promise<number> =>
      fetch(`${fleet.nginx.apiUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fleet-slow', stream: true, max_tokens: maxTokens, messages: [{ role: 'user', content: 'count' }] }),
        signal: AbortSignal.timeout(20_000),
      }).then(async (response) => (await response.text(), response.status));
    // Requests each instance answered, refused ones included: the window is one, wherever a request lands.
    const spread = async (): Promise<number[]> => Promise.all(fleet.instances.map((instance) => handledChats(instance.url)));
    const count = (statuses: number[], status: number): number => statuses.filter((each) => each === status).length;

    // 30 requests at once, spread by nginx over three instances, against one minute window of 10.
    const rpm = await newAccount(5, { rpm: 10 });
    const before = await spread();
    const rpmStatuses = (await Promise.all(Array.from({ length: 30 }, () => chat(fleet.nginx.apiUrl, rpm.key)))).map((answer) => answer.status);
    expect(count(rpmStatuses, 200), JSON.stringify(rpmStatuses)).toBe(10);
    expect(count(rpmStatuses, 429)).toBe(20);
    const after = await spread();
    expect(after.filter((handled, index) => handled > (before[index] ?? 0)).length, 'more than one instance took part').toBeGreaterThan(1);

    // Streams of about 3 s, 12 at once: two slots for the key.
    const concurrency = await newAccount(5, { concurrency: 2 });
    const concurrencyStatuses = await Promise.all(Array.from({ length: 12 }, () => streamed(concurrency.key, 16)));
    expect(count(concurrencyStatuses, 200), JSON.stringify(concurrencyStatuses)).toBe(2);
    expect(count(concurrencyStatuses, 429)).toBe(10);

    // Each stream is charged its prompt estimate plus 1,000 tokens of output cap until it ends: 3 fit in 3,500.
    const tpm = await newAccount(5, { tpm: 3500 });
    const tpmStatuses = await Promise.all(Array.from({ length: 12 }, () => streamed(tpm.key, 1000)));
    expect(count(tpmStatuses, 200), JSON.stringify(tpmStatuses)).toBe(3);
    expect(count(tpmStatuses, 429)).toBe(9);
  }, 60_000);

  it('has an admin change in effect on every instance by the time the admin call returns', async () => {
    const { key, keyId } = await newAccount(1);
    for (const instance of fleet.instances) expect((await chat(instance.url, key)).status).toBe(200);
    const revoked = await admin('PATCH', `/admin/keys/${keyId}`, { status: 'revoked' });
    expect(revoked.status).toBe(200);
    const answers = await Promise.all(fleet.instances.map((instance) => chat(instance.url, key)));
    expect(answers.map((answer) => answer.status)).toEqual([401, 401, 401]);

    const { key: other } = await newAccount(1);
    const model = `fleet-new-${randomBytes(3).toString('hex')}`;
    expect((await admin('POST', '/admin/models', { id: model, pricing: { input_per_mtok: 1, output_per_mtok: 1 } })).status).toBe(201);
    expect((await admin('POST', '/admin/channels', { name: model, type: 'simulator', models: [model] })).status).toBe(201);
    const routed = await Promise.all(fleet.instances.map((instance) => chat(instance.url, other, model)));
    expect(routed.map((answer) => answer.status)).toEqual([200, 200, 200]);
  });

  it('restarts every instance in turn under constant load, streams included, without one failed request', async () => {
    const { accountId, key } = await newAccount(50);
    const load = startConstantLoad(fleet.nginx.apiUrl, key, LOAD_MODELS);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const startedAt = Date.now();
    const phases: string[] = [];
    for (let slot = 0; slot < fleet.instances.length; slot += 1) {
      phases.push(await fleet.roll(slot));
      // nginx retries a refused instance after fail_timeout (5 s); the next stop comes sooner, on purpose: the load
      // then meets an instance that is back and one that is going at once.
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const tally = await load.stop();
    console.info(`rolling restart of ${fleet.instances.length} instances: ${Date.now() - startedAt} ms, ${tally.completed} requests (${phases.join('; ')})`);

    expect(tally.failures, await fleet.nginx.unretriedErrors()).toEqual([]);
    expect(tally.completed).toBeGreaterThan(50);
    expect(tally.streamsCompleted).toBeGreaterThan(10);
    await expectEveryChargeAccounted(accountId, tally.completed);
  }, 100_000);

  it('upgrades every instance in turn to a release with one more migration, under constant load, without one failed request', async () => {
    const release = await buildNextRelease();
    try {
      // An account from before the upgrade, for the migration's backfill to fill in.
      const { accountId, key } = await newAccount(50);
      const load = startConstantLoad(fleet.nginx.apiUrl, key, LOAD_MODELS);
      await new Promise((resolve) => setTimeout(resolve, 500));
      const startedAt = Date.now();

      // The first instances of the new release, two at once beside the fleet: one migrates, the other waits for the
      // migration lock and then finds nothing to do (run twice, the migration would fail on the column it adds, and
      // that instance would not start). The old instances behind nginx serve on the new schema.
      const [first, second] = await Promise.all(['next-0', 'next-1'].map((name) => fleet.cluster.start(name, {}, undefined, undefined, release.bin)));
      for (const instance of [first, second]) {
        if (instance === undefined) continue;
        await waitUntil(async () => (await readyzStatus(instance.url)) === 200, 10_000, `${instance.name} ready`);
      }
      expect(await migrationRows(release.migration)).toBe(1);

      // An instance of the old release starting after the migration (a restart, a crash) starts, is ready, and serves.
      const late = await fleet.cluster.start('old-after-migration');
      const lateReady = await call<{ status: string; checks: Record<string, unknown> }>(late.url, 'GET', '/readyz');
      expect(lateReady.body).toMatchObject({ status: 'ready', checks: { database: 'ok', migrations: 'current' } });
      expect((await chat(late.url, (await newAccount(1)).key)).status).toBe(200);
      // They drain and exit while the fleet rolls.
      const extras = [first, second, late].flatMap((instance) => (instance === undefined ? [] : [instance]));
      for (const instance of extras) instance.process.child.kill('SIGTERM');

      const phases: string[] = [];
      for (let slot = 0; slot < fleet.instances.length; slot += 1) {
        phases.push(await fleet.roll(slot, release.bin));
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const tally = await load.stop();
      for (const instance of extras) expect(await instance.process.exited, instance.name).toEqual({ code: 0, signal: null });
      console.info(`rolling upgrade of ${fleet.instances.length} instances: ${Date.now() - startedAt} ms, ${tally.completed} requests (${phases.join('; ')})`);

      expect(tally.failures, await fleet.nginx.unretriedErrors()).toEqual([]);
      expect(tally.completed).toBeGreaterThan(50);
      expect(tally.streamsCompleted).toBeGreaterThan(10);
      for (const instance of fleet.instances) {
        const ready = await call<{ checks: Record<string, unknown> }>(instance.url, 'GET', '/readyz');
        expect(ready.body.checks).toMatchObject({ migrations: 'current' });
      }
      expect(await migrationRows(release.migration)).toBe(1);
      expect(await columnsOf('accounts')).toContain('email_domain');
      expect(await columnsOf('usage_logs')).toContain('client_region');
      expect(await emailDomainOf(accountId)).toBe('example.com');
      await expectEveryChargeAccounted(accountId, tally.completed);
    } finally {
      await release.remove();
    }
  }, 150_000);
});
