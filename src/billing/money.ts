import type { NanoUsd } from '../domain/records.js';

/** Money is integer nano-USD (1e-9 USD) everywhere; these are the only conversions to and from decimal USD. */
export const NANO_PER_USD = 1_000_000_000n;

/**
 * The largest balance an account may hold, and the largest debt a correction may leave (one billion USD): far
 * inside a signed 64-bit count of nano-USD even with a credit line of the same size added.
 */
export const MAX_BALANCE_NANO = 1_000_000_000n * NANO_PER_USD;

export class MoneyFormatError extends Error {
  override name = 'MoneyFormatError';
}

/**
 * Exact decimal USD → nano-USD. Accepts a JSON number or a decimal string (`"12.5"`, `"-0.000000001"`, `"1e-7"`);
 * refuses anything finer than one nano-USD rather than rounding money silently.
 */
export function usdToNano(value: number | string): NanoUsd {
  if (typeof value === 'number' && !Number.isFinite(value)) throw new MoneyFormatError(`${value} is not a finite amount`);
  const text = expandExponent(typeof value === 'number' ? String(value) : value.trim());
  const match = /^(-)?(\d+)(?:\.(\d+))?$/.exec(text);
  if (match === null) throw new MoneyFormatError(`"${String(value)}" is not a decimal USD amount`);
  const [, sign, whole = '0', fraction = ''] = match;
  const trimmedFraction = fraction.replace(/0+$/, '');
  if (trimmedFraction.length > 9) throw new MoneyFormatError(`"${String(value)}" is finer than 1e-9 USD`);
  const nano = BigInt(whole) * NANO_PER_USD + BigInt(trimmedFraction.padEnd(9, '0') || '0');
  return sign === '-' ? -nano : nano;
}

/** `1.5e-7` → `0.00000015`, exactly from the digit string, never through float arithmetic. Other text is returned as is. */
function expandExponent(text: string): string {
  const form = /^(-?)(\d+)(?:\.(\d+))?e([+-]?\d{1,3})$/i.exec(text);
  if (form === null) return text;
  const [, sign = '', integerPart = '', fractionPart = '', exponentText = '0'] = form;
  const exponent = Number(exponentText);
  const allDigits = integerPart + fractionPart;
  const pointPosition = integerPart.length + exponent;
  let plain: string;
  if (pointPosition <= 0) plain = `0.${'0'.repeat(-pointPosition)}${allDigits}`;
  else if (pointPosition >= allDigits.length) plain = allDigits + '0'.repeat(pointPosition - allDigits.length);
  else plain = `${allDigits.slice(0, pointPosition)}.${allDigits.slice(pointPosition)}`;
  return `${sign}${plain}`;
}

/** nano-USD → exact decimal string, e.g. 1500000000n → "1.5". */
export function nanoToDecimalString(nano: NanoUsd): string {
  const negative = nano < 0n;
  const absolute = negative ? -nano : nano;
  const whole = absolute / NANO_PER_USD;
  const fraction = (absolute % NANO_PER_USD).toString().padStart(9, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction === '' ? '' : `.${fraction}`}`;
}

/**
 * For JSON output: the double nearest to the exact decimal. It prints as that decimal up to about 8.3 million USD
 * (2^23); beyond that the last nano digits may differ. Storage and arithmetic never use this.
 */
export function nanoToUsd(nano: NanoUsd): number {
  return Number(nanoToDecimalString(nano));
}
