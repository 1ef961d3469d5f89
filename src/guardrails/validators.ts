/**
 * Checks that turn a look-alike into a detection: the Luhn digit of payment cards, the ISO 13616 mod-97 check and
 * per-country length of IBANs, IP address parsing, Shannon entropy of a token. Pure functions over strings.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** True when the digits (separators already removed) carry a valid Luhn check digit. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** The card networks whose numbers are detected: an issuer prefix and the lengths that network issues. */
export function cardBrand(digits: string): string | undefined {
  const n = digits.length;
  const p2 = Number(digits.slice(0, 2));
  const p3 = Number(digits.slice(0, 3));
  const p4 = Number(digits.slice(0, 4));
  const p6 = Number(digits.slice(0, 6));
  if (digits[0] === '4' && (n === 13 || n === 16 || n === 19)) return 'visa';
  if (((p2 >= 51 && p2 <= 55) || (p4 >= 2221 && p4 <= 2720)) && n === 16) return 'mastercard';
  if ((p2 === 34 || p2 === 37) && n === 15) return 'amex';
  if ((p4 === 6011 || p2 === 65 || (p3 >= 644 && p3 <= 649) || (p6 >= 622126 && p6 <= 622925)) && n >= 16 && n <= 19) return 'discover';
  if (p4 >= 3528 && p4 <= 3589 && n >= 16 && n <= 19) return 'jcb';
  if ((p2 === 36 || p2 === 38 || p2 === 39 || (p3 >= 300 && p3 <= 305) || p3 === 309) && n >= 14 && n <= 19) return 'diners';
  if (p2 === 62 && n >= 16 && n <= 19) return 'unionpay';
  if ((p4 === 5018 || p4 === 5020 || p4 === 5038 || p4 === 5893 || p4 === 6304 || p4 === 6759 || p4 === 6761 || p4 === 6762 || p4 === 6763) && n >= 12 && n <= 19) return 'maestro';
  return undefined;
}

/** IBAN lengths by country (ISO 13616 registry): a candidate of another length is not an IBAN. */
export const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, BY: 28, CH: 21, CR: 22, CY: 28,
  CZ: 24, DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18,
  GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32,
  LI: 21, LT: 20, LU: 20, LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15,
  PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, SA: 24, SC: 31, SD: 18, SE: 24, SI: 19, SK: 24, SM: 27,
  ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20,
};

/** The mod-97 remainder of an IBAN (compact, upper case) with its first four characters moved to the end. */
export function ibanRemainder(iban: string): number {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (let i = 0; i < rearranged.length; i++) {
    const c = rearranged.charCodeAt(i);
    if (c >= 48 && c <= 57) remainder = (remainder * 10 + (c - 48)) % 97;
    else if (c >= 65 && c <= 90) remainder = (remainder * 100 + (c - 55)) % 97;
    else return -1;
  }
  return remainder;
}

/** A compact upper-case IBAN of its country's length whose check digits hold. */
export function ibanValid(iban: string): boolean {
  const length = IBAN_LENGTHS[iban.slice(0, 2)];
  return length === iban.length && ibanRemainder(iban) === 1;
}

/** IPv4 dotted quad, each part 0-255 without leading zeros (the form addresses are written in). */
export function ipv4Valid(text: string): boolean {
  if (!isIPv4(text)) return false;
  return text.split('.').every((part) => part === '0' || !part.startsWith('0'));
}

export function ipv6Valid(text: string): boolean {
  return isIPv6(text);
}

/** Shannon entropy in bits per character. */
export function shannonEntropy(text: string): number {
  const counts = new Map<number, number>();
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    counts.set(c, (counts.get(c) ?? 0) + 1);
  }
  let bits = 0;
  for (const count of counts.values()) {
    const p = count / text.length;
    bits -= p * Math.log2(p);
  }
  return bits;
}
