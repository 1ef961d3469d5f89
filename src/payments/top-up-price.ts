import { GatewayError } from '../errors/gateway-error.js';
import { usdToNano, MoneyFormatError } from '../billing/money.js';
import type { TaxConfig, TopUpConfig } from '../config/commerce-config.js';
import type { NanoUsd } from '../domain/records.js';

export const NANO_PER_CENT = 10_000_000n;

export interface TopUpPrice {
  /** What the account is credited. */
  creditCents: number;
  taxCents: number;
  /** What the card is charged. */
  totalCents: number;
}

/** Tax on an amount of cents, rounded half up to the cent (the rule every invoice and credit note uses). */
export function taxOn(cents: number, tax: TaxConfig | null): number {
  if (tax === null) return 0;
  return Math.floor((cents * tax.rateBasisPoints + 5_000) / 10_000);
}

/** An amount the user chose (a preset or typed), checked against the operator's bounds; tax goes on top. */
export function priceTopUp(amountUsd: number | string, bounds: TopUpConfig, tax: TaxConfig | null): TopUpPrice {
  let nano: NanoUsd;
  try {
    nano = usdToNano(amountUsd);
  } catch (error) {
    if (error instanceof MoneyFormatError) throw new GatewayError('bad_request', `'amount_usd' is not an amount in USD.`, { param: 'amount_usd' });
    throw error;
  }
  if (nano % NANO_PER_CENT !== 0n) throw new GatewayError('bad_request', `'amount_usd' must be in whole cents.`, { param: 'amount_usd' });
  const cents = nano / NANO_PER_CENT;
  if (cents < BigInt(bounds.minimumCents) || cents > BigInt(bounds.maximumCents)) {
    throw new GatewayError('bad_request', `'amount_usd' must be from ${centsToUsdText(bounds.minimumCents)} to ${centsToUsdText(bounds.maximumCents)} USD.`, { param: 'amount_usd' });
  }
  const creditCents = Number(cents);
  const taxCents = taxOn(creditCents, tax);
  return { creditCents, taxCents, totalCents: creditCents + taxCents };
}

/** 1250 → "12.50". */
export function centsToUsdText(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const absolute = Math.abs(cents);
  return `${sign}${Math.floor(absolute / 100)}.${String(absolute % 100).padStart(2, '0')}`;
}

export function centsToNano(cents: number): NanoUsd {
  return BigInt(cents) * NANO_PER_CENT;
}
