/**
 * WRITE_BATCH_MS: settlements and usage rows wait up to that long to be written together (on PostgreSQL a settled
 * request's usage row goes in the statement that writes its settlement). At the longest delay allowed, every answered
 * request still gets exactly one usage row and one ledger entry of the same cost, written by the delay alone (no
 * flush asked), the balance is the credit minus the rows' costs to the nano-dollar and the ledger check passes; and
 * whatever still waits when the gateway stops is written by the shutdown. Runs on SQLite, or PostgreSQL with
 * TEST_DATABASE_URL.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ledger } from '../../../src/billing/ledger.js';
import { checkLedger } from '../../../src/billing/ledger-check.js';
import { NANO_PER_USD } from '../../../src/billing/money.js';
import type { UsageLogRow } from '../../../src/domain/usage-records.js';
import { systemClock } from '../../../src/shared/clock.js';
import { newId } from '../../../src/shared/ids.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { SecretBox } from '../../../src/shared/secret-box.js';
import { openStorage } from '../../../src/storage/open-storage.js';
import type { Storage } from '../../../src/storage/storage.js';
import { UsageLogWriter } from '../../../src/usage-log/usage-log-writer.js';
import { seedAccount, startTestGateway, suiteDatabase, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { createThrowawayPostgresDatabase, type ThrowawayPostgresDatabase } from '../../support/postgres-test-database.js';
import { makeAccount, makeApiKey, makeUsageLog } from '../../storage/fixtures.js';
import { addSimulatorModel } from '../admin/helpers.js';

const MODEL = 'batch-delay-model';
const CREDIT_USD = 5;
const REQUESTS = 24;

interface Answer {
  requestId: string;
  /** The cost header of a non-streamed answer (null for a stream). */
  costNano: bigint | null;
}

function usdToNano(text: string): bigint {
  const [whole = '0', fraction = ''] = text.split('.');
  return BigInt(whole) * NANO_PER_USD + BigInt(fraction.padEnd(9, '0').slice(0, 9));
}

async function send(gateway: TestGateway, key: string, stream: boolean): Promise<Answer> {
  const response = await fetch(`${gateway.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'count the rows' }], max_tokens: 20, ...(stream ? { stream: true } : {}) }),
    signal: AbortSignal.timeout(20_000),
  });
  await response.arrayBuffer();
  expect(response.status).toBe(200);
  const cost = response.headers.get('x-request-cost-usd');
  return { requestId: response.headers.get('x-request-id') as string, costNano: cost === null ? null : usdToNano(cost) };
}

function sendMany(gateway: TestGateway, key: string): Promise<Answer[]> {
  return Promise.all(Array.from({ length: REQUESTS }, (_, index) => send(gateway, key, index % 2 === 1)));
}

/** Each answered request has one usage row and one usage entry of minus its cost; the balance is the credit minus the costs. */
async function expectExactBooks(storage: Storage, accountId: string, answers: readonly Answer[]): Promise<void> {
  const rows = (await storage.usage.query({ accountId }, { limit: 1000 })).data;
  const entries = (await storage.ledger.listByAccount(accountId, { limit: 1000 })).data.filter((entry) => entry.kind === 'usage');
  expect(rows.map((row) => row.requestId).sort()).toEqual(answers.map((answer) => answer.requestId).sort());
  expect(entries.map((entry) => entry.requestId).sort()).toEqual(answers.map((answer) => answer.requestId).sort());
  const rowById = new Map(rows.map((row) => [row.requestId, row]));
  for (const entry of entries) {
    const row = rowById.get(entry.requestId as string) as UsageLogRow;
    expect(row.costNano).toBeGreaterThan(0n);
    expect(entry.amountNano).toBe(-row.costNano);
  }
  for (const answer of answers) if (answer.costNano !== null) expect(rowById.get(answer.requestId)?.costNano).toBe(answer.costNano);
  const spent = rows.reduce((sum, row) => sum + row.costNano, 0n);
  expect((await storage.accounts.getBalances([accountId])).get(accountId)).toBe(BigInt(CREDIT_USD) * NANO_PER_USD - spent);
  const check = await checkLedger(storage, accountId);
  expect(check.problems).toEqual([]);
  expect(check.ok).toBe(true);
}

/** Waits (bounded) until `count` usage rows of the account are stored, asking no writer to flush. */
async function waitForRows(storage: Storage, accountId: string, count: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while ((await storage.usage.query({ accountId }, { limit: 1000 })).data.length < count) {
    if (Date.now() > deadline) throw new Error(`fewer than ${count} usage rows after 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('WRITE_BATCH_MS at its longest (1000 ms)', () => {
  const dialect = suiteDatabase();
  let postgres: ThrowawayPostgresDatabase | null = null;
  let directory: string;
  let databaseUrl: string;
  let gateway: TestGateway;
  let account: SeededAccount;

  beforeAll(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'unigate-batch-delay-'));
    postgres = dialect === 'postgres' ? await createThrowawayPostgresDatabase() : null;
    databaseUrl = postgres?.url ?? `sqlite:${path.join(directory, 'gateway.db')}`;
    gateway = await startTestGateway({ env: { DATABASE_URL: databaseUrl, WRITE_BATCH_MS: '1000' } });
    await addSimulatorModel(gateway, MODEL, { input_per_mtok: 3, output_per_mtok: 15 }, { settings: { output_tokens: 12 } });
    account = await seedAccount(gateway, { balanceUsd: CREDIT_USD });
  });

  afterAll(async () => {
    await gateway?.close();
    await postgres?.drop();
    await rm(directory, { recursive: true, force: true });
  });

  it('writes every usage row and ledger entry exactly, by the delay alone', async () => {
    const answers = await sendMany(gateway, account.key);
    const storage = gateway.gateway.services.storage;
    await waitForRows(storage, account.accountId, REQUESTS);
    // The entries are written with (PostgreSQL: in the same statement as) or before the rows' own batch.
    const deadline = Date.now() + 20_000;
    while ((await storage.ledger.listByAccount(account.accountId, { limit: 1000 })).data.filter((entry) => entry.kind === 'usage').length < REQUESTS) {
      if (Date.now() > deadline) throw new Error('usage entries missing after 20 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await expectExactBooks(storage, account.accountId, answers);
  });

  it('writes what still waits when the gateway stops', async () => {
    const before = (await gateway.gateway.services.storage.usage.query({ accountId: account.accountId }, { limit: 1000 })).data;
    const answers = await sendMany(gateway, account.key);
    await gateway.close();
    const storage = await openStorage({ url: databaseUrl, secretBox: new SecretBox(randomBytes(32)) });
    try {
      await expectExactBooks(storage, account.accountId, [...before.map((row) => ({ requestId: row.requestId, costNano: row.costNano })), ...answers]);
    } finally {
      await storage.close();
    }
  });
});

/**
 * The same at the ledger itself, with a delay no test outlives: nothing settled is written before `close`, and
 * `close` writes every settlement's ledger entry and every usage row (carried by the settlement on PostgreSQL, by the
 * usage log on SQLite) exactly once.
 */
describe('Ledger and usage log: close writes what waits', () => {
  it('writes each settlement and its usage row once, whatever the delay', async () => {
    const postgres = suiteDatabase() === 'postgres' ? await createThrowawayPostgresDatabase() : null;
    const storage = await openStorage({ url: postgres?.url ?? 'sqlite::memory:', secretBox: new SecretBox(randomBytes(32)) });
    try {
      const owner = makeAccount({ balanceNano: 0n });
      const key = makeApiKey(owner.id);
      await storage.accounts.create(owner);
      await storage.keys.create(key);
      await storage.ledger.applyCredit({ entryId: newId('led'), accountId: owner.id, kind: 'topup', amountNano: 10n * NANO_PER_USD, reason: null, createdAt: 1 });
      const ledger = new Ledger(storage, systemClock, silentLogger, {
        instanceId: `delay-${newId('i')}`, maxBatch: 500, flushIntervalMs: 3_600_000, heartbeatMs: 3_600_000, staleAfterMs: 7_200_000, checkpointMs: 3_600_000, factsTtlMs: 2000,
        lease: { capNano: NANO_PER_USD, scarcityFactor: 64n, shareDivisor: 8n, idleMs: 3_600_000 },
      });
      const usageLog = new UsageLogWriter(storage, silentLogger, { intervalMs: 3_600_000 });
      usageLog.carriedBy(() => ledger.flush());
      const rows: UsageLogRow[] = [];
      for (let index = 0; index < 40; index += 1) {
        const reservation = await ledger.reserve({ accountId: owner.id, keyId: key.id, keyCapped: false, keyBudgeted: false, subscriptions: [], amountNano: 10_000n, entryId: newId('led') });
        const row = makeUsageLog({ accountId: owner.id, keyId: key.id, costNano: BigInt(1_000 + index), createdAt: 1_750_000_000_000 + index });
        rows.push(row);
        // What settle() does: the ledger carries the row where its transaction writes it, the usage log otherwise.
        const carried = ledger.settle(reservation, { costNano: row.costNano, requestId: row.requestId, createdAt: row.createdAt, usageRow: row });
        expect(carried).toBe(suiteDatabase() === 'postgres');
        if (!carried) usageLog.record(row);
      }
      // Nothing written yet: the delay has not passed.
      expect((await storage.usage.query({ accountId: owner.id }, { limit: 1000 })).data).toEqual([]);
      await ledger.close();
      await usageLog.close();
      const stored = new Map((await storage.usage.query({ accountId: owner.id }, { limit: 1000 })).data.map((row) => [row.requestId, row]));
      expect(stored.size).toBe(rows.length);
      for (const row of rows) expect(stored.get(row.requestId)).toEqual(row);
      const entries = (await storage.ledger.listByAccount(owner.id, { limit: 1000 })).data.filter((entry) => entry.kind === 'usage');
      expect(entries.map((entry) => [entry.requestId, entry.amountNano]).sort()).toEqual(rows.map((row) => [row.requestId, -row.costNano]).sort());
      const spent = rows.reduce((sum, row) => sum + row.costNano, 0n);
      expect((await storage.accounts.getBalances([owner.id])).get(owner.id)).toBe(10n * NANO_PER_USD - spent);
      expect((await checkLedger(storage, owner.id)).problems).toEqual([]);
    } finally {
      await storage.close();
      await postgres?.drop();
    }
  });
});
