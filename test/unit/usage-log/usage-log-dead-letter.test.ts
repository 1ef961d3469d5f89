/**
 * The usage-log writer gives up on a batch the database keeps refusing: a bounded number of attempts with a
 * doubling wait, then the batch goes to a dead-letter file in the data directory (logged by count and file, never
 * by content) and the writer carries on; `replayDeadLetters` (the `unigate usage replay` command) writes such files
 * to the usage log and removes them, and keeps a file it cannot write.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger, type Logger } from '../../../src/shared/logger.js';
import type { UsageLogRow } from '../../../src/domain/usage-records.js';
import { listDeadLetters, readDeadLetter, writeDeadLetter } from '../../../src/usage-log/dead-letter-file.js';
import { replayDeadLetters } from '../../../src/usage-log/replay-dead-letters.js';
import { UsageLogWriter } from '../../../src/usage-log/usage-log-writer.js';

function row(requestId: string, costNano = 123_456_789_012_345_678n): UsageLogRow {
  return {
    requestId, accountId: 'acc_1', keyId: 'key_1', model: 'gpt-test', channelId: 'chn_1', protocol: 'openai', endpoint: 'chat.completions',
    stream: false, status: 200, errorCode: null, promptTokens: 10, completionTokens: 4, cachedTokens: 0, reasoningTokens: 0, totalTokens: 14,
    costNano, latencyMs: 12, ttfbMs: null, attempts: 1, createdAt: 1_700_000_000_000, attemptedChannels: ['chn_1'],
  };
}

/** A usage repository that refuses while `down` is true and records what it accepts. */
function usageStore() {
  const store = {
    down: true,
    attempts: [] as number[],
    written: [] as UsageLogRow[],
    async insertBatch(rows: UsageLogRow[]): Promise<void> {
      store.attempts.push(performance.now());
      if (store.down) throw Object.assign(new Error('relation "usage_logs" is locked'), { code: '55P03' });
      store.written.push(...rows);
    },
  };
  return store;
}

function recordingLogger(): { logger: Logger; lines: Array<{ level: string; message: string; fields: Record<string, unknown> }> } {
  const lines: Array<{ level: string; message: string; fields: Record<string, unknown> }> = [];
  const at = (level: string) => (message: string, fields: Record<string, unknown> = {}): void => {
    lines.push({ level, message, fields });
  };
  return { logger: { ...silentLogger, warn: at('warn'), error: at('error') }, lines };
}

describe('usage-log dead letters', () => {
  const directories: string[] = [];
  afterEach(async () => {
    await Promise.all(directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
  });
  async function scratch(): Promise<string> {
    const directory = await mkdtemp(path.join(tmpdir(), 'unigate-dead-letter-'));
    directories.push(directory);
    return path.join(directory, 'usage-dead-letter');
  }

  it('retries a refused batch a bounded number of times with a doubling wait, then keeps it in a dead-letter file and carries on', async () => {
    const directory = await scratch();
    const store = usageStore();
    const { logger, lines } = recordingLogger();
    const writer = new UsageLogWriter({ usage: store } as never, logger, { maxAttempts: 4, retryDelayMs: 20, deadLetterDirectory: directory, intervalMs: 1 });
    writer.record(row('req_a'));
    writer.record(row('req_b'));
    await writer.flush();

    expect(store.attempts).toHaveLength(4);
    const waits = store.attempts.slice(1).map((at, index) => at - (store.attempts[index] ?? 0));
    expect(waits[0]).toBeGreaterThanOrEqual(18);
    expect(waits[1]).toBeGreaterThanOrEqual(38);
    expect(waits[2]).toBeGreaterThanOrEqual(78);

    const files = await listDeadLetters(directory);
    expect(files).toHaveLength(1);
    expect(await readDeadLetter(files[0] ?? '')).toEqual([row('req_a'), row('req_b')]);
    const failure = lines.find((line) => line.level === 'error');
    expect(failure?.fields).toMatchObject({ rows: 2, attempts: 4, file: files[0] });
    // Logged by count and file only: no row's content.
    expect(JSON.stringify(lines)).not.toContain('req_a');
    expect(JSON.stringify(lines)).not.toContain('gpt-test');

    store.down = false;
    writer.record(row('req_c'));
    await writer.close();
    expect(store.written.map((written) => written.requestId)).toEqual(['req_c']);
  });

  it('replays dead-letter files into the usage log and removes them; a second replay finds nothing', async () => {
    const directory = await scratch();
    await writeDeadLetter(directory, [row('req_1'), row('req_2', 0n)], 1000);
    await writeDeadLetter(directory, [row('req_3', -5n)], 2000);
    const store = usageStore();
    store.down = false;
    const result = await replayDeadLetters(store, directory);
    expect(result.failed).toEqual([]);
    expect(result.replayed.map((entry) => entry.rows)).toEqual([2, 1]);
    expect(store.written).toEqual([row('req_1'), row('req_2', 0n), row('req_3', -5n)]);
    expect(await readdir(directory)).toEqual([]);
    expect(await replayDeadLetters(store, directory)).toEqual({ replayed: [], failed: [] });
  });

  it('keeps a file it cannot write, and says why', async () => {
    const directory = await scratch();
    const file = await writeDeadLetter(directory, [row('req_kept')], 3000);
    const result = await replayDeadLetters(usageStore(), directory);
    expect(result.replayed).toEqual([]);
    expect(result.failed).toEqual([{ file: path.basename(file), reason: 'relation "usage_logs" is locked' }]);
    expect(existsSync(file)).toBe(true);
  });

  it('finds no files when the folder was never made', async () => {
    expect(await replayDeadLetters(usageStore(), path.join(await scratch(), 'missing'))).toEqual({ replayed: [], failed: [] });
  });
});
