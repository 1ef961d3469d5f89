import { describe, expect, it } from 'vitest';
import type { UsageLogRow } from '../../../src/domain/usage-records.js';
import type { Reservation } from '../../../src/billing/money-pools.js';
import { decodeReservation, decodeUsageRow, encodeReservation, encodeUsageRow, StreamCheckpoints } from '../../../src/billing/stream-checkpoints.js';

const reservation: Reservation = {
  entryId: 'led_1', accountId: 'acc_1', keyId: 'key_1', keyCapped: true, keyBudgeted: false, subscriptionId: 'sub_1', candidateSubscriptions: ['sub_1'],
  amountNano: 9_000_000_000_000_000_001n, parts: { wallet: 1n, subscription: 9_000_000_000_000_000_000n, overage: 0n, key: 9_000_000_000_000_000_001n, budget: 0n },
};

const row = (costNano: bigint): UsageLogRow => ({
  requestId: 'req_1', accountId: 'acc_1', keyId: 'key_1', model: 'm', channelId: 'ch', protocol: 'anthropic-messages', endpoint: '/v1/messages', stream: true,
  status: 502, errorCode: 'instance_stopped', promptTokens: 3, completionTokens: 4, cachedTokens: 0, reasoningTokens: 0, totalTokens: 7, costNano,
  latencyMs: 5, ttfbMs: 1, attempts: 1, attemptedChannels: ['ch'], createdAt: 1,
});

describe('stream checkpoints', () => {
  it('round-trips reservations and usage rows exactly (amounts beyond 2^53)', () => {
    expect(decodeReservation(encodeReservation(reservation))).toEqual(reservation);
    expect(decodeUsageRow(encodeUsageRow(row(2n ** 60n + 1n)))).toEqual(row(2n ** 60n + 1n));
  });

  it('writes a figure only when it changed, never above the hold, never after the stream ended', async () => {
    const checkpoints = new StreamCheckpoints();
    const small: Reservation = { ...reservation, amountNano: 100n };
    let cost = 40n;
    checkpoints.track('req_1', small, () => Promise.resolve({ costNano: cost, row: row(cost) }));
    const first = await checkpoints.changed();
    expect(first.map((pending) => pending.stored.costNano)).toEqual([40n]);
    expect(checkpoints.claimForWrite(first)).toHaveLength(1);
    expect(await checkpoints.changed()).toEqual([]);
    cost = 500n;
    const capped = await checkpoints.changed();
    expect(capped[0]?.stored.costNano).toBe(100n);
    expect(decodeUsageRow(capped[0]?.stored.usageRow ?? '').costNano).toBe(100n);
    // A failed write is written again at the next checkpoint.
    checkpoints.forget(checkpoints.claimForWrite(capped));
    expect(await checkpoints.changed()).toHaveLength(1);
    // The stream ended before its pending figure was written: nothing is written, and its settlement deletes the stored one.
    const late = await checkpoints.changed();
    expect(checkpoints.finish('req_1')).toBe(true);
    expect(checkpoints.claimForWrite(late)).toEqual([]);
    expect(checkpoints.finish('req_1')).toBe(false);
  });

  it('writes a stream due at its first byte on its own, with its opening figure, then the full figure at the interval', async () => {
    const checkpoints = new StreamCheckpoints();
    checkpoints.track('req_old', reservation, () => Promise.resolve({ costNano: 9n, row: row(9n) }));
    checkpoints.track('req_new', reservation, () => Promise.resolve({ costNano: 70n, row: row(70n) }), () => Promise.resolve({ costNano: 50n, row: row(50n) }));
    expect(await checkpoints.changed(true)).toEqual([]);
    expect(checkpoints.markDue('req_new')).toBe(true);
    expect(checkpoints.markDue('req_new')).toBe(false);
    expect(checkpoints.markDue('req_unknown')).toBe(false);
    const due = await checkpoints.changed(true);
    expect(due.map((pending) => [pending.stored.requestId, pending.costNano])).toEqual([['req_new', 50n]]);
    expect(checkpoints.claimForWrite(due)).toHaveLength(1);
    expect(checkpoints.dueCount).toBe(0);
    // Written once: not due again.
    expect(checkpoints.markDue('req_new')).toBe(false);
    expect((await checkpoints.changed()).map((pending) => [pending.stored.requestId, pending.costNano])).toEqual([['req_old', 9n], ['req_new', 70n]]);
  });

  it('reports no stored checkpoint for a stream never written, and skips a figure that fails', async () => {
    const checkpoints = new StreamCheckpoints();
    checkpoints.track('req_2', reservation, () => Promise.reject(new Error('tokenizer unavailable')));
    expect(await checkpoints.changed()).toEqual([]);
    expect(checkpoints.finish('req_2')).toBe(false);
  });
});
