import type { Account } from '../domain/records.js';
import type { TierLimitsSource } from './tier-book.js';

/** Where an account's effective limit comes from: its own override, its tier, or nowhere (no limit). */
export type LimitSource = 'account' | 'tier' | 'none';

export interface EffectiveLimit {
  value: number | null;
  source: LimitSource;
}

export interface EffectiveAccountLimits {
  rpm: EffectiveLimit;
  tpm: EffectiveLimit;
  concurrency: EffectiveLimit;
}

function pick(own: number | null, tier: number | null): EffectiveLimit {
  if (own !== null) return { value: own, source: 'account' };
  return tier === null ? { value: null, source: 'none' } : { value: tier, source: 'tier' };
}

/** The account's own RPM/TPM/concurrency where set, the tier's otherwise (tiers set no concurrency). From memory. */
export function effectiveAccountLimits(tiers: TierLimitsSource, account: Account): EffectiveAccountLimits {
  const tier = tiers.limitsFor(account.tier);
  return { rpm: pick(account.rpm, tier.rpm), tpm: pick(account.tpm, tier.tpm), concurrency: pick(account.concurrency, null) };
}
