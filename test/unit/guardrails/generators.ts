/** Valid payment card numbers and IBANs, generated: the property tests' inputs. */
import fc from 'fast-check';
import { ibanRemainder } from '../../../src/guardrails/validators.js';

/** Issuer prefixes and lengths, one or more per network the card detector knows. */
const CARD_SHAPES: readonly { prefix: string; length: number }[] = [
  { prefix: '4', length: 16 }, { prefix: '4', length: 13 }, { prefix: '4', length: 19 },
  { prefix: '51', length: 16 }, { prefix: '55', length: 16 }, { prefix: '2221', length: 16 }, { prefix: '2720', length: 16 },
  { prefix: '34', length: 15 }, { prefix: '37', length: 15 },
  { prefix: '6011', length: 16 }, { prefix: '65', length: 19 }, { prefix: '644', length: 16 },
  { prefix: '3528', length: 16 }, { prefix: '3589', length: 19 },
  { prefix: '36', length: 14 }, { prefix: '300', length: 14 },
  { prefix: '62', length: 16 }, { prefix: '6759', length: 18 },
];

export function luhnCheckDigit(partial: string): number {
  let sum = 0;
  let double = true;
  for (let i = partial.length - 1; i >= 0; i--) {
    let d = Number(partial[i]);
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return (10 - (sum % 10)) % 10;
}

export const validCard = fc
  .tuple(fc.constantFrom(...CARD_SHAPES), fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 19, maxLength: 19 }))
  .map(([shape, digits]) => {
    const partial = (shape.prefix + digits.join('')).slice(0, shape.length - 1);
    return partial + String(luhnCheckDigit(partial));
  });

/** A card number as people write it: plain, in groups of four with spaces, or with dashes. */
export const writtenCard = fc.tuple(validCard, fc.constantFrom('', ' ', '-')).map(([digits, sep]) => ({
  digits,
  written: sep === '' ? digits : (digits.match(/.{1,4}/g) ?? []).join(sep),
}));

/** BBAN shapes: n digits, a letters, c upper-case alphanumerics, in order. */
const IBAN_SHAPES: readonly { country: string; parts: readonly ['n' | 'a' | 'c', number][] }[] = [
  { country: 'DE', parts: [['n', 18]] },
  { country: 'GB', parts: [['a', 4], ['n', 14]] },
  { country: 'FR', parts: [['n', 10], ['c', 11], ['n', 2]] },
  { country: 'NL', parts: [['a', 4], ['n', 10]] },
  { country: 'ES', parts: [['n', 20]] },
  { country: 'IT', parts: [['a', 1], ['n', 10], ['c', 12]] },
  { country: 'BE', parts: [['n', 12]] },
  { country: 'CH', parts: [['n', 5], ['c', 12]] },
  { country: 'NO', parts: [['n', 11]] },
  { country: 'PL', parts: [['n', 24]] },
  { country: 'MT', parts: [['a', 4], ['n', 5], ['c', 18]] },
  { country: 'SA', parts: [['n', 2], ['c', 18]] },
];
const DIGITS = '0123456789';
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

export const validIban = fc
  .tuple(fc.constantFrom(...IBAN_SHAPES), fc.array(fc.integer({ min: 0, max: 1_000_000 }), { minLength: 30, maxLength: 30 }))
  .map(([shape, randoms]) => {
    let bban = '';
    let r = 0;
    for (const [type, count] of shape.parts) {
      for (let i = 0; i < count; i++) {
        const pool = type === 'n' ? DIGITS : type === 'a' ? LETTERS : LETTERS + DIGITS;
        bban += pool[(randoms[r++ % randoms.length] ?? 0) % pool.length];
      }
    }
    const check = 98 - ibanRemainder(`${shape.country}00${bban}`);
    return `${shape.country}${String(check).padStart(2, '0')}${bban}`;
  });

export const writtenIban = fc.tuple(validIban, fc.boolean()).map(([iban, grouped]) => ({
  iban,
  written: grouped ? (iban.match(/.{1,4}/g) ?? []).join(' ') : iban,
}));

/** Words of everyday prose, and the numbers it carries: counts, prices, percentages, dates, times, versions, ports, ids. */
const WORDS = ['the', 'report', 'was', 'published', 'on', 'and', 'covers', 'period', 'from', 'to', 'revenue', 'grew', 'by', 'team',
  'shipped', 'features', 'fixed', 'bugs', 'meeting', 'at', 'room', 'build', 'takes', 'minutes', 'server', 'started', 'port',
  'version', 'release', 'order', 'invoice', 'total', 'page', 'chapter', 'line', 'step', 'item', 'batch', 'retry', 'after'];
const pad = (n: number, width: number): string => String(n).padStart(width, '0');
const ORDINARY_TOKENS: fc.Arbitrary<string>[] = [
  fc.constantFrom(...WORDS),
  fc.integer({ min: 0, max: 999_999 }).map(String),
  fc.integer({ min: 1, max: 999_999 }).map((n) => n.toLocaleString('en-US')),
  fc.tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 99 })).map(([a, b]) => `$${a}.${pad(b, 2)}`),
  fc.tuple(fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 9 })).map(([a, b]) => `${a}.${b}%`),
  fc.tuple(fc.integer({ min: 1990, max: 2030 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 28 })).map(([y, m, d]) => `${y}-${pad(m, 2)}-${pad(d, 2)}`),
  fc.tuple(fc.integer({ min: 1, max: 28 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1990, max: 2030 })).map(([d, m, y]) => `${d}/${m}/${y}`),
  fc.tuple(fc.integer({ min: 0, max: 23 }), fc.integer({ min: 0, max: 59 }), fc.integer({ min: 0, max: 59 })).map(([h, m, s]) => `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}`),
  fc.tuple(fc.integer({ min: 0, max: 20 }), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 200 })).map(([a, b, c]) => `v${a}.${b}.${c}`),
  fc.integer({ min: 1, max: 65_535 }).map((n) => `localhost:${n}`),
  fc.integer({ min: 1, max: 99_999 }).map((n) => `#${n}`),
  fc.uuid(),
];

/** A paragraph of ordinary text: words and everyday numbers, with punctuation. */
export const ordinaryText = fc
  .array(fc.tuple(fc.oneof(...ORDINARY_TOKENS), fc.constantFrom(' ', ' ', ' ', ', ', '. ', '; ')), { minLength: 20, maxLength: 60 })
  .map((tokens) => tokens.map(([token, after]) => token + after).join('').trim());
