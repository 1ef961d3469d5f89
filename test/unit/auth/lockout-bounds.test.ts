/**
 * The bounds that keep a lockout cheap: guessed keys reach storage only by a rare chance (the set of issued keys
 * answers in memory, and its re-reads are at most one per interval however many guesses arrive), and lockouts are
 * written to the log and the audit log at most a few per minute, the rest counted.
 */
import { describe, expect, it } from 'vitest';
import { hashApiKey, issueApiKey } from '../../../src/auth/api-key-format.js';
import { IssuedKeySet } from '../../../src/auth/issued-key-set.js';
import { LockoutReport } from '../../../src/auth/lockout-report.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { newId } from '../../../src/shared/ids.js';
import type { AuditEntry } from '../../../src/storage/repositories/operator-repository.js';

function storedKeys(clock: ManualClock, count: number): Array<{ id: string; secretHash: string }> {
  return Array.from({ length: count }, () => ({ id: newId('key', clock.now()), secretHash: issueApiKey('sk', 'unigate').secretHash }));
}

describe('IssuedKeySet', () => {
  it('knows every stored key after one paged read, and refuses guesses without reading again within the interval', async () => {
    const clock = new ManualClock(1_700_000_000_000);
    const keys = storedKeys(clock, 25);
    const reads: Array<string | null> = [];
    const set = new IssuedKeySet(async (afterId, limit) => {
      reads.push(afterId);
      return keys.filter((key) => afterId === null || key.id > afterId).sort((a, b) => a.id.localeCompare(b.id)).slice(0, limit);
    }, clock, { refreshMs: 5000, clockSkewMs: 60_000, pageSize: 10 });

    for (const key of keys) expect(await set.mayBeIssued(key.secretHash)).toBe(true);
    expect(reads).toHaveLength(3);
    let admitted = 0;
    for (let guess = 0; guess < 10_000; guess += 1) if (await set.mayBeIssued(hashApiKey(`sk-guess-${guess}-0123456789abcdefghij`))) admitted += 1;
    expect(admitted).toBe(0);
    expect(reads).toHaveLength(3);

    // A key made elsewhere is found by the next re-read, which starts a clock-skew margin before the last read.
    clock.advance(5000);
    const later = storedKeys(clock, 1)[0] as { id: string; secretHash: string };
    keys.push(later);
    expect(await set.mayBeIssued(later.secretHash)).toBe(true);
    // Every key here is younger than the margin: the re-read pages through all 26 again.
    expect(reads).toHaveLength(6);
    expect(reads[3]! < (keys[0] as { id: string }).id).toBe(true);
    // Guesses during the next interval read nothing more.
    for (let guess = 0; guess < 100; guess += 1) await set.mayBeIssued(hashApiKey(`sk-other-${guess}-0123456789abcdefghij`));
    expect(reads).toHaveLength(6);
  });
});

describe('LockoutReport', () => {
  it('writes at most the per-minute budget of lockouts to the log and the audit log, counts them all, and says how many it left out', async () => {
    const clock = new ManualClock(1_700_000_000_000 - (1_700_000_000_000 % 60_000));
    const audits: AuditEntry[] = [];
    const logged: string[] = [];
    let started = 0;
    const report = new LockoutReport({
      clock,
      logger: { warn: (message: string) => logged.push(message), info: () => undefined, error: () => undefined, debug: () => undefined } as never,
      appendAudit: async (entry) => {
        audits.push(entry);
      },
      countStarted: () => (started += 1),
      countRefused: () => undefined,
      limit: 30,
      windowSeconds: 60,
      reportsPerMinute: 3,
    });
    for (let address = 0; address < 50; address += 1) report.started('api-key', `203.0.113.${address}`);
    expect(started).toBe(50);
    expect(audits).toHaveLength(3);
    expect(logged).toHaveLength(3);
    clock.advance(60_000);
    report.started('api-key', '198.51.100.1');
    expect(audits).toHaveLength(4);
    expect(JSON.parse(audits[3]?.after ?? '{}')).toMatchObject({ surface: 'api-key', failures: 30, unreported_before: 47 });
    expect(audits[3]).toMatchObject({ operatorId: 'gateway', action: 'lockout started', target: 'ip:198.51.100.1', status: 429 });
  });
});
