/**
 * On SQLite, usage rows are written synchronously on the event loop, so a batch is cut into short transactions with
 * a turn of the loop between them: every row is still written once and in the order recorded, shutdown still writes
 * everything queued, and a slice the database refuses still sends its batch to the dead-letter file, which replays
 * without doubling the rows already written.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openSqliteConnection } from '../../../src/storage/sqlite-connection.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { UsageLogRow } from '../../../src/domain/usage-records.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { SecretBox } from '../../../src/shared/secret-box.js';
import type { SqliteWriter } from '../../../src/storage/dialects.js';
import { openStorage } from '../../../src/storage/open-storage.js';
import type { Storage } from '../../../src/storage/storage.js';
import { listDeadLetters, readDeadLetter } from '../../../src/usage-log/dead-letter-file.js';
import { replayDeadLetters } from '../../../src/usage-log/replay-dead-letters.js';
import { UsageLogWriter } from '../../../src/usage-log/usage-log-writer.js';

function row(index: number): UsageLogRow {
  return {
    requestId: `req_${String(index).padStart(5, '0')}`, accountId: null, keyId: null, model: 'gpt-test', channelId: null, protocol: 'openai',
    endpoint: 'chat.completions', stream: false, status: 200, errorCode: null, promptTokens: 10, completionTokens: 4, cachedTokens: 0,
    reasoningTokens: 0, totalTokens: 14, costNano: 1_000n + BigInt(index), latencyMs: 12, ttfbMs: null, attempts: 1, createdAt: 1_700_000_000_000,
  };
}

interface Slice {
  writer: SqliteWriter;
  seconds: number;
  rows: number;
}

describe('SQLite usage writes in slices', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function open(): Promise<{ storage: Storage; file: string; directory: string; slices: Slice[] }> {
    const directory = await mkdtemp(path.join(tmpdir(), 'unigate-usage-slices-'));
    const file = path.join(directory, 'gateway.db');
    const slices: Slice[] = [];
    const storage = await openStorage({
      url: `sqlite:${file}`,
      secretBox: new SecretBox(randomBytes(32)),
      observeWrite: (writer, seconds, rows) => slices.push({ writer, seconds, rows }),
    });
    cleanups.push(async () => {
      await storage.close();
      await rm(directory, { recursive: true, force: true });
    });
    return { storage, file, directory, slices };
  }

  /** The request ids in the table, in the order they were inserted. */
  function storedIds(file: string): string[] {
    const database = openSqliteConnection(file, { readOnly: true, mustExist: true });
    try {
      return (database.prepare('select request_id from usage_logs order by rowid').all() as Array<{ request_id: string }>).map((stored) => stored.request_id);
    } finally {
      database.close();
    }
  }

  it('lets the event loop run between slices of one batch and writes every row once, in order', async () => {
    const { storage, file, slices } = await open();
    const rows = Array.from({ length: 5000 }, (_, index) => row(index));
    let turns = 0;
    const tick = (): void => {
      turns += 1;
      if (turns < 10_000) setImmediate(tick);
    };
    setImmediate(tick);
    const turnsBefore = turns;
    await storage.usage.insertBatch(rows);
    const usage = slices.filter((slice) => slice.writer === 'usage');
    expect(usage.length).toBeGreaterThan(1);
    expect(turns - turnsBefore).toBeGreaterThanOrEqual(usage.length - 1);
    expect(usage.reduce((sum, slice) => sum + slice.rows, 0)).toBe(rows.length);
    expect(storedIds(file)).toEqual(rows.map((logged) => logged.requestId));
    turns = 10_000;
  });

  it('writes everything queued by the time the writer is closed', async () => {
    const { storage, file } = await open();
    const writer = new UsageLogWriter(storage, silentLogger, { maxBatch: 500, intervalMs: 60_000 });
    const rows = Array.from({ length: 1_730 }, (_, index) => row(index));
    for (const logged of rows) writer.record(logged);
    await writer.close();
    expect(storedIds(file)).toEqual(rows.map((logged) => logged.requestId));
  });

  it('sends a batch with a refused slice to the dead-letter file; the replay writes it without doubling rows', async () => {
    const { storage, file, directory } = await open();
    const poison = row(700).requestId;
    const admin = openSqliteConnection(file, { mustExist: true });
    cleanups.push(async () => {
      admin.close();
    });
    admin.exec(`create trigger refuse_poison before insert on usage_logs when new.request_id = '${poison}' begin select raise(abort, 'refused'); end`);
    const deadLetters = path.join(directory, 'usage-dead-letter');
    const writer = new UsageLogWriter(storage, silentLogger, { maxBatch: 500, intervalMs: 60_000, maxAttempts: 2, retryDelayMs: 1, deadLetterDirectory: deadLetters });
    const rows = Array.from({ length: 1_000 }, (_, index) => row(index));
    for (const logged of rows) writer.record(logged);
    await writer.close();

    const files = await listDeadLetters(deadLetters);
    expect(files).toHaveLength(1);
    const kept = await readDeadLetter(files[0] as string);
    expect(kept.map((logged) => logged.requestId)).toEqual(rows.slice(500).map((logged) => logged.requestId));
    const before = storedIds(file);
    expect(before).not.toContain(poison);
    expect(before.slice(0, 500)).toEqual(rows.slice(0, 500).map((logged) => logged.requestId));

    admin.exec('drop trigger refuse_poison');
    const replay = await replayDeadLetters(storage.usage, deadLetters);
    expect(replay.failed).toEqual([]);
    expect([...storedIds(file)].sort()).toEqual(rows.map((logged) => logged.requestId));
  });
});
