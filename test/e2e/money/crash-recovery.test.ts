/**
 * A gateway killed with SIGKILL while requests hold money, then restarted with the same instance id: it releases
 * what its previous run held (nothing leaks), while every charge settled before the kill is still in the ledger
 * and the books balance. Meanwhile a second instance sees the dead one's holds (they are not double-counted as free).
 */
import { openSqliteConnection } from '../../../src/storage/sqlite-connection.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, killAll, runCommand } from '../cli/cli-process.js';
import { ledgerEntries, startServeCluster, type ServeCluster } from '../serve-cluster.js';

const YAML = [
  'models:',
  '  - { id: crash-fast, pricing: { input_per_mtok: 1000, output_per_mtok: 1000 } }',
  '  - { id: crash-slow, pricing: { input_per_mtok: 1000, output_per_mtok: 1000 } }',
  'channels:',
  '  - { name: crash-fast, type: simulator, models: [crash-fast], settings: { output_tokens: 5 } }',
  '  - { name: crash-slow, type: simulator, models: [crash-slow], settings: { output_tokens: 5, latency_ms: 20000 } }',
];

interface HoldJson {
  instance_id: string;
  pool: string;
  held_usd: number;
}

async function chat(url: string, key: string, model: string, signal?: AbortSignal): Promise<number> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hold this' }], max_tokens: 5 }),
    ...(signal === undefined ? {} : { signal }),
  });
  await response.text();
  return response.status;
}

describe('SIGKILL during requests', () => {
  let cluster: ServeCluster;

  beforeAll(async () => {
    cluster = await startServeCluster(0, YAML);
  }, 60_000);

  afterAll(async () => {
    killAll();
    await cluster?.close();
  });

  it('leaks no reservation and loses no settled charge', async () => {
    const victim = await cluster.start('victim', { INSTANCE_ID: 'money-victim' });
    const witness = await cluster.start('witness', { INSTANCE_ID: 'money-witness' });
    const account = await cluster.admin<{ id: string }>('POST', '/admin/accounts', { email: 'crash@example.com' });
    const accountId = account.body.id;
    await cluster.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 1 });
    const key = (await cluster.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, {})).body.key;

    for (let index = 0; index < 5; index += 1) expect(await chat(victim.url, key, 'crash-fast')).toBe(200);
    // Settlements are group-committed within 100 ms: wait until all five are in the ledger.
    let settled: Awaited<ReturnType<typeof ledgerEntries>> = [];
    for (let attempt = 0; attempt < 50 && settled.length < 5; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      settled = (await ledgerEntries(cluster, accountId)).filter((entry) => entry.kind === 'usage');
    }
    expect(settled).toHaveLength(5);

    // Slow requests hold money on the victim; wait until storage shows the holds, then kill it mid-request.
    const abort = new AbortController();
    const inFlight = Array.from({ length: 4 }, () => chat(victim.url, key, 'crash-slow', abort.signal).catch(() => 0));
    let victimHolds: HoldJson[] = [];
    for (let attempt = 0; attempt < 50 && victimHolds.length === 0; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      victimHolds = (await cluster.admin<{ data: HoldJson[] }>('GET', `/admin/money/holds?account_id=${accountId}`, undefined, 1)).body.data.filter((hold) => hold.instance_id === 'money-victim');
    }
    expect(victimHolds.length).toBeGreaterThan(0);
    victim.process.kill();
    await victim.process.exited;
    abort.abort();
    await Promise.all(inFlight);

    // The witness still counts the dead instance's holds (they are released by its restart or after the stale interval).
    const orphaned = (await cluster.admin<{ data: HoldJson[] }>('GET', `/admin/money/holds?account_id=${accountId}`, undefined, 1)).body.data;
    expect(orphaned.some((hold) => hold.instance_id === 'money-victim')).toBe(true);

    // Restarted under the same instance id: its orphaned holds are released at start.
    cluster.instances.splice(cluster.instances.indexOf(victim), 1);
    await cluster.start('victim-again', { INSTANCE_ID: 'money-victim' });
    const after = (await cluster.admin<{ data: HoldJson[] }>('GET', `/admin/money/holds?account_id=${accountId}`, undefined, 0)).body.data;
    expect(after.filter((hold) => hold.instance_id === 'money-victim')).toEqual([]);

    // Nothing settled before the kill was lost; the killed requests were never charged; the books balance.
    const usage = (await ledgerEntries(cluster, accountId)).filter((entry) => entry.kind === 'usage');
    expect(usage.map((entry) => entry.id).sort()).toEqual(settled.map((entry) => entry.id).sort());
    const check = await cluster.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${accountId}`);
    expect(check.body.problems).toEqual([]);
    expect(check.body.ok).toBe(true);
    expect(witness.process.hasExited()).toBe(false);

    // The CLI proves the same, and fails (exit 1) once a balance no longer matches its ledger.
    const cliEnvironment = cleanEnv({ DATABASE_URL: cluster.databaseUrl, SECRET_KEY: cluster.environment.SECRET_KEY ?? '', DATA_DIR: cluster.directory, LOG_LEVEL: 'warn' });
    const clean = await runCommand(['ledger', 'check', '--account', accountId], cluster.directory, cliEnvironment);
    expect(clean.code, clean.stderr).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ ok: true, problems: [] });
    await tamperBalance(cluster.databaseUrl, accountId);
    const broken = await runCommand(['ledger', 'check', '--account', accountId], cluster.directory, cliEnvironment);
    expect(broken.code).toBe(1);
    expect(JSON.parse(broken.stdout)).toMatchObject({ ok: false, problems: [{ kind: 'balance_mismatch', id: accountId }] });
  }, 60_000);
});

describe('an instance gone for good', () => {
  let cluster: ServeCluster;

  beforeAll(async () => {
    // A short stale interval so the sweep is seen within the test (heartbeats every sixth of it).
    cluster = await startServeCluster(0, YAML, { INSTANCE_STALE_SECONDS: '2' });
  }, 60_000);

  afterAll(async () => {
    killAll();
    await cluster?.close();
  });

  it('has its holds released by another instance once it has been silent for INSTANCE_STALE_SECONDS', async () => {
    const survivor = await cluster.start('survivor', { INSTANCE_ID: 'money-survivor' });
    const victim = await cluster.start('gone', { INSTANCE_ID: 'money-gone' });
    const account = await cluster.admin<{ id: string }>('POST', '/admin/accounts', { email: 'gone@example.com' });
    const accountId = account.body.id;
    await cluster.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 1 });
    const key = (await cluster.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, {})).body.key;

    const abort = new AbortController();
    const inFlight = Array.from({ length: 3 }, () => chat(victim.url, key, 'crash-slow', abort.signal).catch(() => 0));
    const holdsOf = async (instanceId: string): Promise<HoldJson[]> =>
      (await cluster.admin<{ data: HoldJson[] }>('GET', `/admin/money/holds?account_id=${accountId}`)).body.data.filter((hold) => hold.instance_id === instanceId);
    let held: HoldJson[] = [];
    for (let attempt = 0; attempt < 50 && held.length === 0; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      held = await holdsOf('money-gone');
    }
    expect(held.length).toBeGreaterThan(0);
    victim.process.kill();
    await victim.process.exited;
    abort.abort();
    await Promise.all(inFlight);
    const killedAt = Date.now();
    expect((await holdsOf('money-gone')).length).toBeGreaterThan(0);

    // Never restarted: the survivor's sweep (about once per stale interval) releases them within twice the stale interval (2 s).
    let remaining = held;
    while (remaining.length > 0 && Date.now() - killedAt < 8000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      remaining = await holdsOf('money-gone');
    }
    expect(remaining).toEqual([]);
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(1000);
    expect(survivor.process.hasExited()).toBe(false);
    // The freed funds serve requests again and the books balance.
    expect(await chat(survivor.url, key, 'crash-fast')).toBe(200);
    const check = await cluster.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${accountId}`);
    expect(check.body).toMatchObject({ ok: true, problems: [] });
  }, 60_000);
});

/** Moves a balance behind the ledger's back, straight in the database (what the check exists to catch). */
async function tamperBalance(databaseUrl: string, accountId: string): Promise<void> {
  if (databaseUrl.startsWith('sqlite:')) {
    const database = openSqliteConnection(databaseUrl.slice('sqlite:'.length), { mustExist: true });
    try {
      database.prepare('update accounts set balance_nano = balance_nano + 1 where id = ?').run(accountId);
    } finally {
      database.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query('update accounts set balance_nano = balance_nano + 1 where id = $1', [accountId]);
  } finally {
    await client.end();
  }
}
