import type { NanoUsd } from '../domain/records.js';

const NANO_PER_CENT = 10_000_000n;
const NANO_PER_MICRO = 1_000n;

function withThousands(digits: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * An amount as people read it, in mails and logs meant for them, by the console's rule (web/src/format): whole
 * cents cut toward zero, so no amount shows more than there is ("$7.99" for 7.9994015 USD); a non-zero amount
 * below a cent to six decimals ("$0.000123").
 */
export function formatUsdText(nano: NanoUsd): string {
  const sign = nano < 0n ? '-' : '';
  const size = nano < 0n ? -nano : nano;
  if (size !== 0n && size < NANO_PER_CENT) {
    const micros = (size / NANO_PER_MICRO).toString().padStart(6, '0');
    const decimals = micros.replace(/0+$/, '').padEnd(2, '0');
    return `${sign}$0.${decimals}`;
  }
  const cents = size / NANO_PER_CENT;
  const dollars = (cents / 100n).toString();
  return `${sign}$${withThousands(dollars)}.${(cents % 100n).toString().padStart(2, '0')}`;
}
