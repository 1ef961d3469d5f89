/**
 * How long one SQLite money transaction holds the event loop, by the number of settlements in it: requests are
 * reserved and settled through the gateway's own Ledger on a SQLite file (20 accounts, a key each, wallet payments),
 * and the transaction's duration is read from the storage's write observer, as `unigate_sqlite_write_seconds` reads it.
 *
 *   node dist/bench/money-hold.js [runs per size, default 15]
 *
 * Prints, per batch size, the median and the range of the hold, and the median per settlement.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Ledger } from '../src/billing/ledger.js';
import { NANO_PER_USD } from '../src/billing/money.js';
import type { Account, ApiKey } from '../src/domain/records.js';
import { newId } from '../src/shared/ids.js';
import { systemClock } from '../src/shared/clock.js';
import { silentLogger } from '../src/shared/logger.js';
import { SecretBox } from '../src/shared/secret-box.js';
import { openStorage } from '../src/storage/open-storage.js';
import { median } from './measure.js';

const ACCOUNTS = 20;
const BATCH_SIZES = [50, 100, 200, 500] as const;
const COST_NANO = 1_000n;

function account(id: string): Account {
  return {
    id, email: `${id}@bench.test`, passwordHash: 'unused', tier: 'default', balanceNano: 1_000n * NANO_PER_USD, creditLineNano: 0n,
    alertBalanceNano: null, status: 'enabled', rpm: null, tpm: null, concurrency: null, deletedAt: null, createdAt: 0, updatedAt: 0,
  };
}

function apiKey(accountId: string): ApiKey {
  const id = newId('key');
  return {
    id, accountId, name: 'bench', secretHash: `hash-${id}`, displayHint: 'sk-…', status: 'enabled', quotaNano: null, spentNano: 0n,
    allowedModels: null, ipAllowlist: null, expiresAt: null, rpm: null, tpm: null, concurrency: null, budget: null, allowedOrigins: null,
    createdAt: 0, updatedAt: 0, environment: null, createdBy: null, playground: false,
  };
}

async function main(): Promise<void> {
  const runs = Math.max(1, Number(process.argv[2] ?? 15));
  const dir = mkdtempSync(join(tmpdir(), 'unigate-money-hold-'));
  let lastHoldMs = 0;
  const storage = await openStorage({
    url: `sqlite:${join(dir, 'bench.db')}`,
    secretBox: new SecretBox(randomBytes(32)),
    observeWrite: (writer, seconds) => {
      if (writer === 'money') lastHoldMs = seconds * 1000;
    },
  });
  const ledger = new Ledger(storage, systemClock, silentLogger, {
    instanceId: 'bench', maxBatch: 500, flushIntervalMs: 60_000, heartbeatMs: 60_000, staleAfterMs: 600_000, checkpointMs: 60_000, factsTtlMs: 2000,
    lease: { capNano: NANO_PER_USD / 2n, scarcityFactor: 64n, shareDivisor: 8n, idleMs: 60_000 },
  });
  try {
    const keys: ApiKey[] = [];
    for (let index = 0; index < ACCOUNTS; index++) {
      const owner = account(newId('acct'));
      await storage.accounts.create(owner);
      const key = apiKey(owner.id);
      await storage.keys.create(key);
      keys.push(key);
    }
    for (const size of BATCH_SIZES) {
      const holds: number[] = [];
      for (let run = 0; run < runs + 1; run++) {
        const reservations = [];
        for (let index = 0; index < size; index++) {
          const key = keys[index % ACCOUNTS] as ApiKey;
          reservations.push(await ledger.reserve({
            accountId: key.accountId, keyId: key.id, keyCapped: false, keyBudgeted: false, subscriptions: [], amountNano: COST_NANO, entryId: newId('led'),
          }));
        }
        // Leases were grown by transactions of their own: only the settlements' transaction is timed.
        await ledger.flush();
        const now = Date.now();
        for (const reservation of reservations) ledger.settle(reservation, { costNano: COST_NANO, requestId: newId('req'), createdAt: now });
        await ledger.flush();
        // The first run of each size warms the statements and the pages it touches.
        if (run > 0) holds.push(lastHoldMs);
      }
      const sorted = [...holds].sort((left, right) => left - right);
      const middle = median(holds);
      console.log(`${String(size).padStart(4)} settlements: hold median ${middle.toFixed(2)} ms (${(sorted[0] as number).toFixed(2)}-${(sorted.at(-1) as number).toFixed(2)}), ${((middle * 1000) / size).toFixed(1)} us a settlement`);
    }
  } finally {
    await ledger.close();
    await storage.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
