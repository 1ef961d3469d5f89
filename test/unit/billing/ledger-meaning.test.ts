import { describe, expect, it } from 'vitest';
import { describeEntry } from '../../../src/billing/ledger-meaning.js';

describe('what a ledger entry means to people', () => {
  it('tells card top-ups, codes and operator credits apart by the reason their writers store', () => {
    expect(describeEntry('topup', 'stripe:top_123', 10n)).toEqual({ type: 'card_top_up', description: 'Card top-up' });
    expect(describeEntry('topup', 'redemption code rc_1', 10n)).toEqual({ type: 'redemption', description: 'Redemption code' });
    expect(describeEntry('topup', 'goodwill', 10n)).toEqual({ type: 'operator_credit', description: 'Credit from the operator' });
    expect(describeEntry('topup', null, 10n).type).toBe('operator_credit');
    expect(describeEntry('correction', 'fix', -10n).type).toBe('operator_debit');
    expect(describeEntry('correction', 'fix', 10n).type).toBe('operator_credit');
  });

  it('names refunds, disputes, reversals, referrals and plans', () => {
    expect(describeEntry('refund', 'stripe-refund:ch_1', -1n).type).toBe('card_refund');
    expect(describeEntry('refund', 'stripe-dispute:dp_1', -1n).type).toBe('card_dispute');
    expect(describeEntry('refund', 'referral-reversal:acct_1', -1n).type).toBe('referral_reversal');
    expect(describeEntry('refund', null, -1n).type).toBe('refund');
    expect(describeEntry('referral', 'referral:acct_1', 1n).type).toBe('referral_reward');
    expect(describeEntry('subscription', 'plan:sub_1:0', -1n).type).toBe('plan_purchase');
    expect(describeEntry('subscription', 'plan-change:sub_1:led_1', -1n).type).toBe('plan_change');
    expect(describeEntry('subscription_grant', null, 0n).type).toBe('plan_grant');
    expect(describeEntry('usage', null, -1n).type).toBe('usage');
    expect(describeEntry('signup_credit', null, 5n)).toEqual({ type: 'sign_up_credit', description: 'Sign-up credit' });
    expect(describeEntry('signup_credit', null, -5n).type).toBe('sign_up_credit_expired');
  });

  it('reads a kind it does not know as its own words, never failing', () => {
    expect(describeEntry('welcome_bonus', 'tier default', 5n)).toEqual({ type: 'welcome_bonus', description: 'Welcome bonus' });
    expect(describeEntry('partner-bonus', null, 5n)).toEqual({ type: 'partner-bonus', description: 'Partner bonus' });
    expect(describeEntry('', null, 5n).description).toBe('Balance change');
  });
});
