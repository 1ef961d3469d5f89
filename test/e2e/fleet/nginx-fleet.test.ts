/**
 * Three gateway processes behind Debian's nginx (deploy/nginx/unigate.conf), on one PostgreSQL database and one
 * Redis: money exact under concurrent spending spread over every instance; an admin change in effect on every
 * instance by the time the admin call returns; and a rolling restart (SIGTERM each instance in turn, restart it)
 * under constant load, streams included, in which the load sees no failed request.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nginxAvailable } from '../../support/nginx-balancer.js';
import { redisServerAvailable } from '../../support/private-redis-server.js';
import { call, type HttpAnswer } from '../admin/helpers.js';
import { killAll, waitUntil } from '../cli/cli-process.js';
import { ledgerEntries, nano } from '../serve-cluster.js';
import { startFleetTopology, type FleetTopology } from './fleet-topology.js';

const canRun = nginxAvailable() && (process.env.TEST_REDIS_URL !== undefined || redisServerAvailable());
// Longer than nginx's upstream keepalive_timeout (3 s), as deploy/compose.yaml's 5 s is.
const DRAIN_SECONDS = 4;

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

    // Each instance writes its own charges in batches: the check asks each, which flushes its queue first.
    for (const instance of fleet.instances) {
      const check = await call<{ ok: boolean; problems: unknown[] }>(instance.url, 'GET', `/admin/ledger/check?account_id=${accountId}`, { token: fleet.cluster.adminToken });
      expect(check.body.ok, JSON.stringify(check.body.problems)).toBe(true);
    }
    const usage = (await ledgerEntries(fleet.cluster, accountId)).filter((entry) => entry.kind === 'usage');
    expect(usage).toHaveLength(served);
    const account = await admin<{ balance_usd: number }>('GET', `/admin/accounts/${accountId}`);
    const balance = nano(account.body.balance_usd);
    expect(balance >= 0n).toBe(true);
    expect(balance).toBe(nano(credit) + usage.reduce((sum, entry) => sum + nano(entry.amount_usd), 0n));
    // Refused requests have rows too, and each instance flushes its own batches: wait for the rows of the charges.
    const rowIdsNow = async (): Promise<Set<string>> =>
      new Set((await admin<{ data: Array<{ request_id: string }> }>('GET', `/admin/usage?account_id=${accountId}&limit=200`)).body.data.map((row) => row.request_id));
    await waitUntil(async () => {
      const ids = await rowIdsNow();
      return usage.every((entry) => ids.has(entry.request_id ?? ''));
    }, 5000, 'usage rows written');
    const rowIds = await rowIdsNow();
    for (const entry of usage) expect(rowIds.has(entry.request_id ?? ''), `usage row of ${entry.request_id}`).toBe(true);
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
  });

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
    const failures: string[] = [];
    let completed = 0;
    let streamsCompleted = 0;
    let running = true;

    async function oneRequest(stream: boolean): Promise<void> {
      try {
        const response = await fetch(`${fleet.nginx.apiUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: stream ? 'fleet-stream' : 'fleet-chat', stream, max_tokens: 16, messages: [{ role: 'user', content: 'keep going' }] }),
          signal: AbortSignal.timeout(20_000),
        });
        const text = await response.text();
        if (response.status !== 200) failures.push(`${response.status} ${text.slice(0, 200)}`);
        else if (stream && !text.includes('data: [DONE]')) failures.push(`stream cut: ${text.slice(-200)}`);
        else {
          completed += 1;
          if (stream) streamsCompleted += 1;
        }
      } catch (error) {
        failures.push(`network: ${String(error)}`);
      }
    }

    const load = Array.from({ length: 6 }, async (_unused, worker) => {
      for (let round = 0; running && round < 10_000; round += 1) await oneRequest((round + worker) % 2 === 0);
    });

    await new Promise((resolve) => setTimeout(resolve, 500));
    const startedAt = Date.now();
    const phases: string[] = [];
    for (let slot = 0; slot < fleet.instances.length; slot += 1) {
      const instance = fleet.instances[slot];
      if (instance === undefined) continue;
      const stoppingAt = Date.now();
      const exited = fleet.stop(slot);
      await waitUntil(async () => (await fetch(`${instance.url}/readyz`).then((response) => response.status, () => 0)) !== 200, 2000, `${instance.name} unready`);
      expect(await exited).toEqual({ code: 0, signal: null });
      const exitedAt = Date.now();
      const next = await fleet.restart(slot);
      await waitUntil(async () => (await fetch(`${next.url}/readyz`).then((response) => response.status, () => 0)) === 200, 10_000, `${next.name} ready again`);
      phases.push(`${instance.name}: stop ${exitedAt - stoppingAt} ms, start ${Date.now() - exitedAt} ms`);
      // nginx retries a refused instance after fail_timeout (5 s); the next stop comes sooner, on purpose: the load
      // then meets an instance that is back and one that is going at once.
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    running = false;
    console.info(`rolling restart of ${fleet.instances.length} instances: ${Date.now() - startedAt} ms, ${completed} requests (${phases.join('; ')})`);
    await Promise.all(load);

    expect(failures, (await fleet.nginx.errorLog()).slice(-2000)).toEqual([]);
    expect(completed).toBeGreaterThan(50);
    expect(streamsCompleted).toBeGreaterThan(10);
    for (const instance of fleet.instances) {
      const check = await call<{ ok: boolean; problems: unknown[] }>(instance.url, 'GET', `/admin/ledger/check?account_id=${accountId}`, { token: fleet.cluster.adminToken });
      expect(check.body.ok, JSON.stringify(check.body.problems)).toBe(true);
    }
    const usage = (await ledgerEntries(fleet.cluster, accountId)).filter((entry) => entry.kind === 'usage');
    expect(usage).toHaveLength(completed);
  }, 100_000);
});
