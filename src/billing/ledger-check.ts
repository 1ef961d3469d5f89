import type { NanoUsd } from '../domain/records.js';
import type { Storage } from '../storage/storage.js';
import { nanoToDecimalString } from './money.js';

export type LedgerProblemKind =
  | 'balance_mismatch'
  | 'key_spend_mismatch'
  | 'subscription_usage_mismatch'
  | 'subscription_overage_mismatch'
  | 'overdrawn'
  | 'over_held'
  | 'duplicate_charge';

export interface LedgerProblem {
  kind: LedgerProblemKind;
  /** Account, key, subscription or request id. */
  id: string;
  /** What storage records (a balance, a spend, a used quota) and what the entries sum to, as decimal USD. */
  recorded: string;
  derived: string;
}

export interface LedgerCheckReport {
  ok: boolean;
  checked: { accounts: number; keys: number; subscriptions: number };
  problems: LedgerProblem[];
}

const usd = (nano: NanoUsd): string => nanoToDecimalString(nano);

/**
 * Proves the books balance: every account's balance equals the sum of its ledger entries, every key's spend the
 * sum of its usage (wallet entries plus subscription usage), every subscription's used quota and overage the sum
 * of its usage rows in the current period; no balance is below its credit line, no wallet is held beyond its funds,
 * and no request has more than one usage entry.
 */
export async function checkLedger(storage: Storage, accountId?: string): Promise<LedgerCheckReport> {
  const audit = await storage.money.audit(accountId);
  const problems: LedgerProblem[] = [];
  for (const account of audit.accounts) {
    if (account.balanceNano !== account.ledgerSumNano) {
      problems.push({ kind: 'balance_mismatch', id: account.id, recorded: usd(account.balanceNano), derived: usd(account.ledgerSumNano) });
    }
    // A refund or dispute may take the balance below zero (the card holder took the money back); only spending
    // may never pass the credit line, so the balance without those reversals is what must stay within it.
    if (account.balanceNano - account.reversedNano + account.creditLineNano < 0n) {
      problems.push({ kind: 'overdrawn', id: account.id, recorded: usd(account.balanceNano - account.reversedNano), derived: usd(-account.creditLineNano) });
    }
    if (account.heldNano > 0n && account.heldNano > account.balanceNano + account.creditLineNano) {
      problems.push({ kind: 'over_held', id: account.id, recorded: usd(account.heldNano), derived: usd(account.balanceNano + account.creditLineNano) });
    }
  }
  for (const key of audit.keys) {
    if (key.spentNano !== key.usageSumNano) problems.push({ kind: 'key_spend_mismatch', id: key.id, recorded: usd(key.spentNano), derived: usd(key.usageSumNano) });
  }
  for (const subscription of audit.subscriptions) {
    if (subscription.usedNano !== subscription.usageSumNano) {
      problems.push({ kind: 'subscription_usage_mismatch', id: subscription.id, recorded: usd(subscription.usedNano), derived: usd(subscription.usageSumNano) });
    }
    if (subscription.overageUsedNano !== subscription.overageSumNano) {
      problems.push({ kind: 'subscription_overage_mismatch', id: subscription.id, recorded: usd(subscription.overageUsedNano), derived: usd(subscription.overageSumNano) });
    }
  }
  for (const requestId of audit.duplicateCharges) problems.push({ kind: 'duplicate_charge', id: requestId, recorded: 'more than one usage entry', derived: 'one' });
  return {
    ok: problems.length === 0,
    checked: { accounts: audit.accounts.length, keys: audit.keys.length, subscriptions: audit.subscriptions.length },
    problems,
  };
}
