/**
 * Usage-log retention on SQLite and (with TEST_DATABASE_URL) PostgreSQL, with an injected clock: rows older than
 * the retention age are deleted in bounded batches, newer rows and every ledger entry stay, the ledger check still
 * balances; two instances pruning together delete each row once; on PostgreSQL an instance finding the pruning
 * lock taken leaves the work to its holder; a stop ends a pass after its current batch.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkLedger } from '../../src/billing/ledger-check.js';
import { ConfigError, loadConfig } from '../../src/config/load-config.js';
import { ManualClock } from '../../src/shared/clock.js';
import { newId } from '../../src/shared/ids.js';
import { silentLogger } from '../../src/shared/logger.js';
import { SecretBox } from '../../src/shared/secret-box.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { UsageLogRow } from '../../src/domain/usage-records.js';
import type { Storage } from '../../src/storage/storage.js';
import { UsageRetention } from '../../src/usage-log/usage-retention.js';
import { createThrowawayPostgresDatabase, isPostgresUrl } from '../support/postgres-test-database.js';
import { makeAccount, makeApiKey, makeUsageLog } from './fixtures.js';

const DAY = 86_400_000;
const NOW = 1_800_000_000_000;

async function countRows(storage: Storage): Promise<number> {
  let count = 0;
  let after: string | null = null;
  for (;;) {
    const page = await storage.usage.query({}, { limit: 1000, after });
    count += page.data.length;
    if (page.nextCursor === null) return count;
    after = page.nextCursor;
  }
}

function rowsAged(count: number, createdAt: (index: number) => number, fields: Partial<UsageLogRow> = {}): UsageLogRow[] {
  return Array.from({ length: count }, (_, index) => makeUsageLog({ ...fields, createdAt: createdAt(index) }));
}

function describeRetention(name: string, openUrl: () => Promise<{ url: string; cleanup: () => Promise<void> }>): void {
  describe(name, () => {
    let a: Storage;
    let b: Storage;
    let url = '';
    let cleanup: () => Promise<void> = async () => {};

    beforeAll(async () => {
      const opened = await openUrl();
      url = opened.url;
      cleanup = opened.cleanup;
      const secretBox = new SecretBox(randomBytes(32));
      a = await openStorage({ url, secretBox });
      b = await openStorage({ url, secretBox });
    });

    afterAll(async () => {
      await a?.close();
      await b?.close();
      await cleanup();
    });

    it('deletes rows past the retention age in bounded batches and leaves newer rows and the ledger', async () => {
      const clock = new ManualClock(NOW);
      const account = makeAccount();
      await a.accounts.create(account);
      const key = makeApiKey(account.id);
      await a.keys.create(key);
      await a.ledger.applyCredit({ entryId: newId('led'), accountId: account.id, kind: 'topup', amountNano: 10_000_000n, reason: null, createdAt: NOW - 100 * DAY });
      // 12,001 rows older than 30 days (two full batches of 5,000 and a partial one), 500 younger ones; the old
      // requests were charged, so the ledger holds a usage entry for each of the first 50.
      const old = rowsAged(12_001, (index) => NOW - 90 * DAY + index, { accountId: account.id, keyId: key.id, costNano: 7n });
      const young = rowsAged(500, (index) => NOW - 30 * DAY + 1 + index, { accountId: account.id, keyId: key.id, costNano: 7n });
      await a.usage.insertBatch([...old, ...young]);
      await a.ledger.settleCharges(old.slice(0, 50).map((row) => ({
        entryId: newId('led'), accountId: account.id, keyId: key.id, requestId: row.requestId, costNano: row.costNano, createdAt: row.createdAt,
      })));
      const ledgerBefore = await a.ledger.listByAccount(account.id, { limit: 100 });
      const balanceBefore = (await a.accounts.getById(account.id))!.balanceNano;

      const retention = new UsageRetention(a.usage, clock, silentLogger, { retentionDays: 30, batchSize: 5000, pauseMs: 1 });
      const startedAt = performance.now();
      const pass = await retention.prune();
      const elapsedMs = performance.now() - startedAt;
      expect(pass).toEqual({ deleted: 12_001, batches: 3, yielded: false });
      console.log(`${name}: 12,001 rows pruned in 3 batches of at most 5,000 in ${elapsedMs.toFixed(0)} ms`);

      expect(await countRows(a)).toBe(500);
      const left = await a.usage.query({ accountId: account.id }, { limit: 1000 });
      expect(left.data.every((row) => row.createdAt >= NOW - 30 * DAY)).toBe(true);
      expect(await a.ledger.listByAccount(account.id, { limit: 100 })).toEqual(ledgerBefore);
      expect((await a.accounts.getById(account.id))!.balanceNano).toBe(balanceBefore);
      const report = await checkLedger(a, account.id);
      expect(report.problems).toEqual([]);
      expect(report.ok).toBe(true);

      // Nothing more is old enough until the clock moves; then the next 100 rows are.
      expect(await retention.prune()).toEqual({ deleted: 0, batches: 1, yielded: false });
      clock.advance(101);
      expect((await retention.prune()).deleted).toBe(100);
      expect(await countRows(a)).toBe(400);
      await retention.stop();
      await a.usage.pruneBatch(Number.MAX_SAFE_INTEGER, 10_000);
    });

    it('deletes each row once when two instances prune together', async () => {
      await a.usage.insertBatch(rowsAged(6000, (index) => NOW - 60 * DAY + index));
      await a.usage.insertBatch(rowsAged(10, (index) => NOW - index));
      const clock = new ManualClock(NOW);
      const options = { retentionDays: 7, batchSize: 1000, pauseMs: 0 };
      const first = new UsageRetention(a.usage, clock, silentLogger, options);
      const second = new UsageRetention(b.usage, clock, silentLogger, options);
      let deleted = 0;
      // A pass that found the lock taken leaves the rest to the holder; later passes finish what remains.
      for (let round = 0; round < 20 && (await countRows(a)) > 10; round += 1) {
        const passes = await Promise.all([first.prune(), second.prune()]);
        deleted += passes[0].deleted + passes[1].deleted;
      }
      expect(deleted).toBe(6000);
      expect(await countRows(a)).toBe(10);
      await a.usage.pruneBatch(Number.MAX_SAFE_INTEGER, 10_000);
    });

    it('ends a pass after the current batch when stopped', async () => {
      await a.usage.insertBatch(rowsAged(3000, (index) => NOW - 60 * DAY + index));
      const retention = new UsageRetention(a.usage, new ManualClock(NOW), silentLogger, { retentionDays: 7, batchSize: 500, pauseMs: 60_000 });
      const pass = retention.prune();
      await new Promise((resolve) => setTimeout(resolve, 200));
      await retention.stop();
      expect(await pass).toEqual({ deleted: 500, batches: 1, yielded: false });
      expect(await countRows(a)).toBe(2500);
      await a.usage.pruneBatch(Number.MAX_SAFE_INTEGER, 10_000);
    });

    if (name.startsWith('PostgreSQL')) {
      it('leaves the work to the instance holding the pruning lock', async () => {
        await a.usage.insertBatch(rowsAged(100, (index) => NOW - 60 * DAY + index));
        const holder = new pg.Client({ connectionString: url });
        await holder.connect();
        try {
          await holder.query("select pg_advisory_lock(hashtext('unigate:usage-log-retention'))");
          const retention = new UsageRetention(a.usage, new ManualClock(NOW), silentLogger, { retentionDays: 7, pauseMs: 0 });
          expect(await retention.prune()).toEqual({ deleted: 0, batches: 0, yielded: true });
          expect(await countRows(a)).toBe(100);
          await holder.query("select pg_advisory_unlock(hashtext('unigate:usage-log-retention'))");
          expect(await retention.prune()).toEqual({ deleted: 100, batches: 1, yielded: false });
        } finally {
          await holder.end();
        }
      });
    }
  });
}

describe('USAGE_RETENTION_DAYS', () => {
  it('is unset by default (keep forever), a whole number of days otherwise', () => {
    expect(loadConfig({}, tmpdir()).usageRetentionDays).toBeNull();
    expect(loadConfig({ USAGE_RETENTION_DAYS: '' }, tmpdir()).usageRetentionDays).toBeNull();
    expect(loadConfig({ USAGE_RETENTION_DAYS: '90' }, tmpdir()).usageRetentionDays).toBe(90);
    expect(() => loadConfig({ USAGE_RETENTION_DAYS: '0' }, tmpdir())).toThrow(ConfigError);
    expect(() => loadConfig({ USAGE_RETENTION_DAYS: '1.5' }, tmpdir())).toThrow(ConfigError);
  });
});

const directories: string[] = [];
afterAll(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

describeRetention('SQLite: usage-log retention', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-retention-'));
  directories.push(directory);
  return { url: `sqlite:${join(directory, 'gateway.db')}`, cleanup: async () => {} };
});

const adminUrl = process.env.TEST_DATABASE_URL;
if (isPostgresUrl(adminUrl)) {
  describeRetention('PostgreSQL: usage-log retention', async () => {
    const database = await createThrowawayPostgresDatabase(adminUrl);
    return { url: database.url, cleanup: () => database.drop() };
  });
}
