/**
 * How fast the reports by customer, tag and key answer on a large usage log, on a SQLite file: ROWS usage rows (one
 * account of interest among ten, 200 customers, 6 tags, 20 keys, over 60 days) are written through the gateway's own
 * usage repository (so the rollup trigger runs on each, as in production), then one account's 30-day report of each
 * dimension is read from the daily rollups, and the same report computed by scanning the usage log is timed beside it.
 *
 *   node dist/bench/customer-report.js [rows, default 1000000]
 *
 * Prints the write rate with the trigger and, per report, the median of 7 reads and the rows they return.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { UsageLogRow } from '../src/domain/usage-records.js';
import { SecretBox } from '../src/shared/secret-box.js';
import { openStorage } from '../src/storage/open-storage.js';
import { median } from './measure.js';

const DAY_MS = 86_400_000;
const DAYS = 60;
const BATCH = 5_000;

function row(index: number, now: number): UsageLogRow {
  const account = index % 10 === 0 ? 'acc_report' : `acc_other_${index % 10}`;
  const created = now - Math.floor((index / 1000) % DAYS) * DAY_MS - (index % 1000);
  return {
    requestId: `req_${index}`,
    accountId: account,
    keyId: `key_${index % 20}`,
    model: 'bench-model',
    channelId: 'ch_bench',
    protocol: 'openai-chat',
    endpoint: '/v1/chat/completions',
    stream: false,
    status: index % 50 === 0 ? 500 : 200,
    errorCode: null,
    promptTokens: 100 + (index % 37),
    completionTokens: 50 + (index % 11),
    cachedTokens: 0,
    reasoningTokens: 0,
    totalTokens: 150,
    costNano: BigInt(1000 + (index % 997)),
    latencyMs: 100,
    ttfbMs: 50,
    attempts: 1,
    createdAt: created,
    customer: `customer-${index % 200}`,
    tags: { team: `team-${index % 3}`, feature: `feature-${index % 2}` },
  };
}

async function main(): Promise<void> {
  const rows = Number(process.argv[2] ?? 1_000_000);
  const directory = mkdtempSync(join(tmpdir(), 'unigate-customer-report-'));
  const storage = await openStorage({ url: `sqlite:${join(directory, 'bench.db')}`, secretBox: new SecretBox(randomBytes(32)) });
  try {
    const now = Date.now();
    const startedAt = performance.now();
    for (let next = 0; next < rows; next += BATCH) {
      await storage.usage.insertBatch(Array.from({ length: Math.min(BATCH, rows - next) }, (_unused, offset) => row(next + offset, now)));
    }
    const seconds = (performance.now() - startedAt) / 1000;
    console.log(`wrote ${rows} usage rows (with the rollup trigger) in ${seconds.toFixed(1)} s: ${Math.round(rows / seconds)} rows/s`);

    const from = now - 29 * DAY_MS;
    for (const dimension of ['customer', 'tag', 'key'] as const) {
      const times: number[] = [];
      let count = 0;
      for (let run = 0; run < 7; run += 1) {
        const began = performance.now();
        count = (await storage.customers.rollups({ accountId: 'acc_report', dimension, from, to: now })).length;
        times.push(performance.now() - began);
      }
      console.log(`report by ${dimension}, one account, 30 days, from the rollups: median ${median(times).toFixed(2)} ms (${count} rows)`);
    }
    // A daily report scanned from the usage log itself (what the rollups save), through the account's index.
    const scanTimes: number[] = [];
    let scanned = 0;
    for (let run = 0; run < 3; run += 1) {
      const began = performance.now();
      const result = await storage.usage.dailyTotals({ accountId: 'acc_report', from, to: now });
      scanned = result.length;
      scanTimes.push(performance.now() - began);
    }
    console.log(`the account's daily totals by model and key scanned from the usage log (30 days): median ${median(scanTimes).toFixed(1)} ms (${scanned} rows)`);
  } finally {
    await storage.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

await main();
