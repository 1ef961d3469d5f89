import type { ReferralReward } from '../config/commerce-config.js';
import type { Referral } from '../domain/commerce-records.js';
import type { NanoUsd } from '../domain/records.js';

/**
 * What the referrer earns for one paid top-up of the referred account: nothing unless the attribution is eligible
 * (not a repeated address) and the referred email is verified; `fixed` pays once, on the first paid top-up;
 * `percent` pays its share (rounded down to the nano-USD) of each of the first `topUps` paid top-ups.
 */
export function referralRewardFor(policy: ReferralReward, referral: Referral | null, paidTopUpsBefore: number, creditNano: NanoUsd): NanoUsd {
  if (referral === null || referral.status !== 'eligible' || !referral.emailVerified) return 0n;
  if (referral.referrerAccountId === referral.referredAccountId) return 0n;
  switch (policy.kind) {
    case 'none':
      return 0n;
    case 'fixed':
      return paidTopUpsBefore === 0 ? policy.amountNano : 0n;
    case 'percent':
      return paidTopUpsBefore < policy.topUps ? (creditNano * BigInt(policy.basisPoints)) / 10_000n : 0n;
    default: {
      const unknown: never = policy;
      throw new TypeError(`unknown referral reward ${JSON.stringify(unknown)}`);
    }
  }
}

/** For the console: "5.00 USD on the first paid top-up" or "10 % of the first 3 paid top-ups". */
export function describeReferralReward(policy: ReferralReward): string {
  switch (policy.kind) {
    case 'none':
      return 'Referrals earn no reward on this gateway.';
    case 'fixed':
      return `${(Number(policy.amountNano) / 1e9).toFixed(2)} USD when the referred account pays its first top-up`;
    case 'percent': {
      const percent = policy.basisPoints % 100 === 0 ? String(policy.basisPoints / 100) : (policy.basisPoints / 100).toFixed(2);
      return policy.topUps === 1 ? `${percent} % of the referred account's first paid top-up` : `${percent} % of the referred account's first ${policy.topUps} paid top-ups`;
    }
    default: {
      const unknown: never = policy;
      throw new TypeError(`unknown referral reward ${JSON.stringify(unknown)}`);
    }
  }
}
