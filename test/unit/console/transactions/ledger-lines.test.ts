import { describe, expect, it } from 'vitest';
import { lineToJson, usageLine, withBalances, type HistoryLine } from '../../../../src/console/transactions/ledger-lines.js';

const line = (id: string, at: number, amountNano: bigint, kind = 'topup'): HistoryLine => ({ id, at, kind, reason: null, amountNano, usage: null });

describe('transaction history lines', () => {
  it('orders newest first and walks the balance back from the closing one, exactly', () => {
    const lines = withBalances([line('a', 1, 5_000_000_000n), line('c', 3, -123n, 'usage'), line('b', 2, 1n)], 5_000_000_000n + 1n - 123n);
    expect(lines.map((entry) => [entry.id, entry.balanceAfterNano])).toEqual([['c', 4_999_999_878n], ['b', 5_000_000_001n], ['a', 5_000_000_000n]]);
  });

  it('breaks ties in time by id, newest id first', () => {
    expect(withBalances([line('led_1', 5, 1n), line('led_2', 5, 1n)], 2n).map((entry) => entry.id)).toEqual(['led_2', 'led_1']);
  });

  it('describes a day of usage with its requests and shortfall', () => {
    const day = Date.UTC(2026, 11, 6);
    const [usage] = withBalances([usageLine({ day, entries: 3, amountNano: -30n, shortfallNano: 7n, lastAt: day + 500 })], 0n);
    expect(lineToJson(usage!)).toEqual({
      id: 'usage_2026-12-06', at: new Date(day + 500).toISOString(), type: 'usage', kind: 'usage', description: 'Usage on 2026-12-06 (3 requests)',
      reason: null, amount_usd: -3e-8, balance_after_usd: 0, requests: 3, shortfall_usd: 7e-9,
    });
  });
});
