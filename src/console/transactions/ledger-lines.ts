import { nanoToUsd } from '../../billing/money.js';
import type { LedgerEntry, NanoUsd } from '../../domain/records.js';
import type { LedgerDailyUsage } from '../../storage/storage.js';

/**
 * What a ledger entry means to the account's people: a type and a sentence, from its kind and the reason its writer
 * stored (`stripe:…` for card top-ups, `redemption code …`, `plan:…`; an operator's credit or debit carries the
 * operator's own words). A kind this module does not know still reads as its words ("signup_credit" → "Signup
 * credit"), so a new kind of entry never breaks the history.
 */
export interface LineMeaning {
  type: string;
  description: string;
}

function words(kind: string): string {
  const text = kind.replace(/[_-]+/g, ' ').trim();
  return text === '' ? 'Balance change' : `${text.charAt(0).toUpperCase()}${text.slice(1)}`;
}

export function describeEntry(kind: string, reason: string | null, amountNano: NanoUsd): LineMeaning {
  const why = reason ?? '';
  switch (kind) {
    case 'topup':
      if (why.startsWith('stripe:')) return { type: 'card_top_up', description: 'Card top-up' };
      if (why.startsWith('redemption code ')) return { type: 'redemption', description: 'Redemption code' };
      return { type: 'operator_credit', description: 'Credit from the operator' };
    case 'correction':
      return amountNano < 0n ? { type: 'operator_debit', description: 'Debit by the operator' } : { type: 'operator_credit', description: 'Correction by the operator' };
    case 'refund':
      if (why.startsWith('stripe-refund:')) return { type: 'card_refund', description: 'Card payment refunded' };
      if (why.startsWith('stripe-dispute:')) return { type: 'card_dispute', description: 'Card payment disputed' };
      if (why.startsWith('referral-reversal:')) return { type: 'referral_reversal', description: 'Referral reward taken back (the referred payment was refunded)' };
      return { type: 'refund', description: 'Refund' };
    case 'referral':
      return { type: 'referral_reward', description: 'Referral reward' };
    case 'subscription':
      return why.startsWith('plan-change:') ? { type: 'plan_change', description: 'Plan change' } : { type: 'plan_purchase', description: 'Plan purchase' };
    case 'subscription_grant':
      return { type: 'plan_grant', description: 'Plan granted by the operator' };
    case 'usage':
      return { type: 'usage', description: 'Usage' };
    default:
      return { type: kind, description: words(kind) };
  }
}

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

export function lineToJson(line: HistoryLine & { balanceAfterNano: NanoUsd }): Record<string, unknown> {
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
