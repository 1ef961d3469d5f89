import { nanoToUsd } from '../../billing/money.js';
import type { LedgerEntry, NanoUsd } from '../../domain/records.js';
import type { LedgerDailyUsage } from '../../storage/storage.js';
import type { TransactionLineJson } from '../../contract/billing.js';
import { describeEntry } from '../../billing/ledger-meaning.js';

/** One line of the transaction history: a ledger entry, or one UTC day's usage entries summed. */
export interface HistoryLine {
  id: string;
  at: number;
  kind: string;
  reason: string | null;
  amountNano: NanoUsd;
  /** Usage lines: the day (epoch ms of 00:00 UTC), its requests and what they cost beyond their funds. */
  usage: { day: number; requests: number; shortfallNano: NanoUsd } | null;
}

export function entryLine(entry: LedgerEntry): HistoryLine {
  return { id: entry.id, at: entry.createdAt, kind: entry.kind, reason: entry.reason, amountNano: entry.amountNano, usage: null };
}

export function usageLine(total: LedgerDailyUsage): HistoryLine {
  const date = new Date(total.day).toISOString().slice(0, 10);
  return {
    id: `usage_${date}`, at: total.lastAt, kind: 'usage', reason: null, amountNano: total.amountNano,
    usage: { day: total.day, requests: total.entries, shortfallNano: total.shortfallNano },
  };
}

/**
 * Newest first, each with the balance after it: `closingNano` is the balance after the newest line, and walking
 * back each line's amount is taken off, so consecutive lines explain every change to the nano-dollar.
 */
export function withBalances(lines: readonly HistoryLine[], closingNano: NanoUsd): Array<HistoryLine & { balanceAfterNano: NanoUsd }> {
  const ordered = [...lines].sort((left, right) => right.at - left.at || (left.id < right.id ? 1 : left.id > right.id ? -1 : 0));
  let balance = closingNano;
  return ordered.map((line) => {
    const shown = { ...line, balanceAfterNano: balance };
    balance -= line.amountNano;
    return shown;
  });
}

export function lineToJson(line: HistoryLine & { balanceAfterNano: NanoUsd }): TransactionLineJson {
  const meaning = describeEntry(line.kind, line.reason, line.amountNano);
  return {
    id: line.id,
    at: new Date(line.at).toISOString(),
    type: meaning.type,
    kind: line.kind,
    description: line.usage === null ? meaning.description : `Usage on ${new Date(line.usage.day).toISOString().slice(0, 10)} (${line.usage.requests} ${line.usage.requests === 1 ? 'request' : 'requests'})`,
    reason: line.reason,
    amount_usd: nanoToUsd(line.amountNano),
    balance_after_usd: nanoToUsd(line.balanceAfterNano),
    requests: line.usage?.requests ?? null,
    shortfall_usd: line.usage === null ? null : nanoToUsd(line.usage.shortfallNano),
  };
}

export const HISTORY_CSV_COLUMNS = ['at', 'type', 'description', 'reason', 'amount_usd', 'balance_after_usd', 'requests', 'shortfall_usd', 'id'] as const;
