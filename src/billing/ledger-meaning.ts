import type { NanoUsd } from '../domain/records.js';

/**
 * What a ledger entry means to the account's people: a type and a sentence, from its kind and the reason its writer
 * stored (`stripe:…` for card top-ups, `redemption code …`, `plan:…`; an operator's credit or debit carries the
 * operator's own words). A kind this module does not know still reads as its words ("some_kind" → "Some kind"), so
 * a new kind of entry never breaks the history.
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
    case 'signup_credit':
      return amountNano < 0n
        ? { type: 'sign_up_credit_expired', description: 'Unused sign-up credit taken back at its expiry' }
        : { type: 'sign_up_credit', description: 'Sign-up credit' };
    default:
      return { type: kind, description: words(kind) };
  }
}
