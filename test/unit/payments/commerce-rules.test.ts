/**
 * The pure rules of payments: commerce configuration from the environment, top-up bounds and tax rounding,
 * referral rewards (fixed once, percent of the first top-ups, nothing for ineligible attributions), credit notes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/load-config.js';
import { GatewayError } from '../../../src/errors/gateway-error.js';
import { creditNoteDraft } from '../../../src/invoices/invoice-drafts.js';
import { priceTopUp, taxOn } from '../../../src/payments/top-up-price.js';
import { describeReferralReward, referralRewardFor } from '../../../src/referrals/referral-reward.js';
import type { Invoice, Referral } from '../../../src/domain/commerce-records.js';

const bounds = { minimumCents: 500, maximumCents: 50_000, presetCents: [1000] };
const vat = { rateBasisPoints: 2000, label: 'VAT' };

describe('commerce configuration', () => {
  it('reads Stripe, bounds, seller, tax, series, referral reward and support address', () => {
    const loaded = loadConfig({
      STRIPE_SECRET_KEY: 'sk_test_1', STRIPE_WEBHOOK_SECRET: 'whsec_1', STRIPE_API_BASE: 'http://127.0.0.1:12111',
      TOPUP_MIN_USD: '2.5', TOPUP_MAX_USD: '100', TOPUP_PRESETS_USD: '50, 5,10',
      SELLER_NAME: 'Seller Ltd', SELLER_ADDRESS: 'Line 1|Line 2', SELLER_TAX_ID: 'GB1',
      TAX_RATE_PERCENT: '8.25', TAX_LABEL: 'Sales tax', INVOICE_SERIES: 'EU1',
      REFERRAL_REWARD: '12.5%', REFERRAL_REWARD_TOPUPS: '3', SUPPORT_EMAIL: 'help@example.com', CONSOLE_PUBLIC_URL: 'https://console.example.com/',
    }, '/tmp');
    expect(loaded.consoleUrl).toBe('https://console.example.com');
    const config = loaded.commerce;
    expect(config.stripe?.apiBase?.port).toBe('12111');
    expect(config.topUp).toEqual({ minimumCents: 250, maximumCents: 10_000, presetCents: [500, 1000, 5000] });
    expect(config.seller).toEqual({ name: 'Seller Ltd', address: 'Line 1\nLine 2', taxId: 'GB1', email: null });
    expect(config.tax).toEqual({ rateBasisPoints: 825, label: 'Sales tax' });
    expect(config.invoiceSeries).toBe('EU1');
    expect(config.referralReward).toEqual({ kind: 'percent', basisPoints: 1250, topUps: 3 });
    expect(config.supportEmail).toBe('help@example.com');
  });

  it('takes CONSOLE_URL over its deprecated alias CONSOLE_PUBLIC_URL, which must be an origin too', () => {
    expect(loadConfig({ CONSOLE_URL: 'https://a.example.com', CONSOLE_PUBLIC_URL: 'https://b.example.com' }, '/tmp').consoleUrl).toBe('https://a.example.com');
    expect(() => loadConfig({ CONSOLE_PUBLIC_URL: 'https://b.example.com/console' }, '/tmp')).toThrow(/CONSOLE_PUBLIC_URL must be an origin/);
  });

  it('turns card payments off unless both Stripe secrets are set, and has working defaults', () => {
    const config = loadConfig({ STRIPE_SECRET_KEY: 'sk_test_1' }, '/tmp').commerce;
    expect(config.stripe).toBeNull();
    expect(config.tax).toBeNull();
    expect(config.referralReward).toEqual({ kind: 'none' });
    expect(config.topUp).toEqual({ minimumCents: 500, maximumCents: 100_000, presetCents: [1000, 2500, 5000, 10_000] });
    expect(loadConfig({ REFERRAL_REWARD: '5' }, '/tmp').commerce.referralReward).toEqual({ kind: 'fixed', amountNano: 5_000_000_000n });
  });

  it.each([
    [{ TOPUP_MIN_USD: '10', TOPUP_MAX_USD: '5' }, 'TOPUP_MAX_USD'],
    [{ TOPUP_PRESETS_USD: '1' }, 'TOPUP_PRESETS_USD'],
    [{ TOPUP_MIN_USD: '1.001' }, 'TOPUP_MIN_USD'],
    [{ TAX_RATE_PERCENT: '101' }, 'TAX_RATE_PERCENT'],
    [{ REFERRAL_REWARD: 'lots' }, 'REFERRAL_REWARD'],
    [{ SUPPORT_EMAIL: 'not-an-address' }, 'SUPPORT_EMAIL'],
    [{ STRIPE_SECRET_KEY: 'a', STRIPE_WEBHOOK_SECRET: 'b', STRIPE_API_BASE: 'ftp://x' }, 'STRIPE_API_BASE'],
    [{ INVOICE_SERIES: 'inv 1' }, 'INVOICE_SERIES'],
  ])('refuses %j naming the variable', (env, name) => {
    expect(() => loadConfig(env, '/tmp')).toThrow(name);
  });
});

describe('top-up price', () => {
  it('keeps amounts within bounds and in whole cents, tax on top', () => {
    expect(priceTopUp('12.34', bounds, vat)).toEqual({ creditCents: 1234, taxCents: 247, totalCents: 1481 });
    expect(priceTopUp(5, bounds, null)).toEqual({ creditCents: 500, taxCents: 0, totalCents: 500 });
    for (const bad of [4.99, 500.01, '1.234', 'x', -10]) expect(() => priceTopUp(bad, bounds, vat)).toThrow(GatewayError);
  });

  it('property: tax is the rate rounded half up to the cent, never off by more than half a cent', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 10_000 }), (cents, basisPoints) => {
      const tax = taxOn(cents, { rateBasisPoints: basisPoints, label: 'T' });
      expect(Number.isInteger(tax)).toBe(true);
      const exact = (cents * basisPoints) / 10_000;
      expect(Math.abs(tax - exact)).toBeLessThanOrEqual(0.5);
    }));
  });
});

describe('referral rewards', () => {
  const referral: Referral = { referredAccountId: 'b', referrerAccountId: 'a', ipHash: 'h', emailVerified: true, status: 'eligible', createdAt: 0 };
  const credit = 40_000_000_000n;

  it('fixed: once, on the first paid top-up', () => {
    const fixed = { kind: 'fixed' as const, amountNano: 5_000_000_000n };
    expect(referralRewardFor(fixed, referral, 0, credit)).toBe(5_000_000_000n);
    expect(referralRewardFor(fixed, referral, 1, credit)).toBe(0n);
    expect(describeReferralReward(fixed)).toBe('5.00 USD when the referred account pays its first top-up');
  });

  it('percent: of each of the first N paid top-ups, rounded down to the nano-USD', () => {
    const percent = { kind: 'percent' as const, basisPoints: 333, topUps: 2 };
    expect(referralRewardFor(percent, referral, 0, 1_000_000_001n)).toBe(33_300_000n);
    expect(referralRewardFor(percent, referral, 1, credit)).toBe(1_332_000_000n);
    expect(referralRewardFor(percent, referral, 2, credit)).toBe(0n);
  });

  it('nothing without an eligible, verified, foreign attribution', () => {
    const fixed = { kind: 'fixed' as const, amountNano: 5_000_000_000n };
    expect(referralRewardFor(fixed, null, 0, credit)).toBe(0n);
    expect(referralRewardFor(fixed, { ...referral, status: 'repeated_ip' }, 0, credit)).toBe(0n);
    expect(referralRewardFor(fixed, { ...referral, emailVerified: false }, 0, credit)).toBe(0n);
    expect(referralRewardFor(fixed, { ...referral, referrerAccountId: 'b' }, 0, credit)).toBe(0n);
    expect(referralRewardFor({ kind: 'none' }, referral, 0, credit)).toBe(0n);
  });
});

describe('credit notes', () => {
  it('negate the refunded credit and its tax share, never more tax than the invoice had', () => {
    const original = {
      id: 'inv_1', accountId: 'a', kind: 'invoice', series: 'INV', sequence: 7, number: 'INV-000007', source: 'stripe:cs_1', correctsInvoiceId: null,
      currency: 'usd', seller: { name: 'S', addressLines: [], country: null, taxId: null, email: null }, buyer: { name: 'B', addressLines: [], country: null, taxId: null, email: null },
      lines: [], tax: { label: 'VAT', rateBasisPoints: 2000 }, subtotalCents: 1000, taxCents: 200, totalCents: 1200, issuedAt: 0,
    } satisfies Invoice;
    const commerce = loadConfig({}, '/tmp').commerce;
    const note = creditNoteDraft({ id: 'inv_2', original, creditCents: 1000, source: 'stripe-refund:ch_1:1200', reason: 'Refund', issuedAt: 1, config: commerce });
    expect(note).toMatchObject({ kind: 'credit_note', series: 'INV-CN', correctsInvoiceId: 'inv_1', subtotalCents: -1000, taxCents: -200, totalCents: -1200 });
    expect(note.lines[0]?.description).toContain('INV-000007');
  });
});
