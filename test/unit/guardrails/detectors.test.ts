import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BUILT_IN_DETECTORS, detect, type Span } from '../../../src/guardrails/detectors.js';
import { ibanValid, luhnValid } from '../../../src/guardrails/validators.js';
import { ordinaryText, writtenCard, writtenIban } from './generators.js';

const ALL = Object.values(BUILT_IN_DETECTORS);
const found = (text: string): { kind: string; text: string }[] => detect(text, ALL).map((s: Span) => ({ kind: s.kind, text: text.slice(s.start, s.end) }));

describe('validators', () => {
  it('Luhn: known test numbers pass, a changed digit fails', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('378282246310005')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
  });
  it('IBAN: the registry example passes; a wrong length or check digits fail', () => {
    expect(ibanValid('DE89370400440532013000')).toBe(true);
    expect(ibanValid('GB82WEST12345698765432')).toBe(true);
    expect(ibanValid('DE88370400440532013000')).toBe(false);
    expect(ibanValid('DE8937040044053201300')).toBe(false);
  });
});

describe('built-in detectors', () => {
  it.each([
    ['write to jane.doe+news@example.co.uk please', 'email', 'jane.doe+news@example.co.uk'],
    ['call +44 20 7946 0958 now', 'phone', '+44 20 7946 0958'],
    ['call (415) 555-2671 now', 'phone', '(415) 555-2671'],
    ['card 4111 1111 1111 1111 exp 12/27', 'card', '4111 1111 1111 1111'],
    ['amex 3782-822463-10005 ok', 'card', '3782-822463-10005'],
    ['IBAN DE89 3704 0044 0532 0130 00 EUR', 'iban', 'DE89 3704 0044 0532 0130 00'],
    ['ssn 123-45-6789.', 'national_id', '123-45-6789'],
    ['NINO AB 12 34 56 C here', 'national_id', 'AB 12 34 56 C'],
    ['DNI 12345678Z here', 'national_id', '12345678Z'],
    ['from 203.0.113.7 at', 'ip_address', '203.0.113.7'],
    ['from 2001:db8::8a2e:370:7334 at', 'ip_address', '2001:db8::8a2e:370:7334'],
    ['key sk-proj-abcdEFGH1234ijklMNOP5678 used', 'secret', 'sk-proj-abcdEFGH1234ijklMNOP5678'],
    ['key sk-ant-api03-abcdEFGH1234ijklMNOP5678qrst used', 'secret', 'sk-ant-api03-abcdEFGH1234ijklMNOP5678qrst'],
    ['AWS AKIAIOSFODNN7EXAMPLE here', 'secret', 'AKIAIOSFODNN7EXAMPLE'],
    ['token ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 x', 'secret', 'ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789'],
    ['slack xoxb-1234567890-abcdefghij x', 'secret', 'xoxb-1234567890-abcdefghij'],
    ['google AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q x', 'secret', 'AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q'],
    ['opaque Zx9Qw2Er7Ty4Ui1Op6As3Df8Gh5Jk0LmNb end', 'secret', 'Zx9Qw2Er7Ty4Ui1Op6As3Df8Gh5Jk0LmNb'],
  ])('%s → %s', (text, kind, match) => {
    expect(found(text)).toEqual([{ kind, text: match }]);
  });

  it.each([
    ['invalid SSN area 000-12-3456'],
    ['Luhn-failing 4111 1111 1111 1112'],
    ['no brand 9111111111111111 (Luhn valid but no network)'],
    ['not an address 256.1.1.1 nor 01.02.03.04'],
    ['DNI with the wrong letter 12345678A'],
    ['lower-case hex sha 9fceb02d0ae598e95dc970b74767f19372d61af8'],
    ['date 2024-01-15 and time 12:30:45'],
    ['a count before a date: rows 10 2024-01-15 loaded'],
    ['digit groups of a UUID: 0a1b2c38-7187-8538-0470-4f5e6d7c8b9a'],
  ])('leaves alone: %s', (text) => {
    expect(found(text)).toEqual([]);
  });

  it('finds every generated valid card (networks and lengths, plain or grouped) and nothing else in the sentence', () => {
    fc.assert(
      fc.property(writtenCard, ({ written }) => {
        expect(found(`Please charge ${written} for the order.`)).toEqual([{ kind: 'card', text: written }]);
      }),
      { numRuns: 2000, seed: 38 },
    );
  });

  it('never reports a card whose check digit was changed', () => {
    fc.assert(
      fc.property(writtenCard, fc.integer({ min: 1, max: 9 }), ({ digits }, delta) => {
        const corrupted = digits.slice(0, -1) + String((Number(digits.at(-1)) + delta) % 10);
        expect(found(`Please charge ${corrupted} now.`).filter((f) => f.kind === 'card')).toEqual([]);
      }),
      { numRuns: 2000, seed: 38 },
    );
  });

  it('finds every generated valid IBAN (12 countries, compact or in groups of four)', () => {
    fc.assert(
      fc.property(writtenIban, ({ written }) => {
        expect(found(`Transfer to ${written} by Friday.`)).toEqual([{ kind: 'iban', text: written }]);
      }),
      { numRuns: 2000, seed: 38 },
    );
  });

  it('never reports an IBAN whose check digits were changed', () => {
    fc.assert(
      fc.property(writtenIban, fc.integer({ min: 1, max: 96 }), ({ iban }, delta) => {
        const check = (Number(iban.slice(2, 4)) + delta) % 97;
        const corrupted = iban.slice(0, 2) + String(check).padStart(2, '0') + iban.slice(4);
        expect(found(`Transfer to ${corrupted} by Friday.`).filter((f) => f.kind === 'iban')).toEqual([]);
      }),
      { numRuns: 2000, seed: 38 },
    );
  });

  it('false positives on ordinary prose, code and log lines stay at most 1 per 4 KB', () => {
    const corpus = readFileSync(new URL('./__fixtures__/ordinary-text.txt', import.meta.url), 'utf8');
    const hits = found(corpus);
    // measured: 0 on this 3.8 KB corpus; the bound is what docs/guardrails.md promises
    expect(hits.length, JSON.stringify(hits)).toBeLessThanOrEqual(Math.ceil(corpus.length / 4096));
  });
});

describe('false positives on generated ordinary text', () => {
  it('stay under 1 per 40 KB over about a megabyte of prose with everyday numbers (dates, times, prices, versions, ports, UUIDs)', () => {
    const texts = fc.sample(ordinaryText, { numRuns: 3000, seed: 38 });
    const chars = texts.reduce((sum, text) => sum + text.length, 0);
    const hits = texts.flatMap(found);
    // measured: 2 in 1.19 MB (three adjacent counts read as a phone number, and as a card); was 662 before a count
    // followed by an ISO date stopped being a phone number and digits touching letters stopped being a card
    expect(chars).toBeGreaterThan(1_000_000);
    expect(hits.length, JSON.stringify(hits.slice(0, 10))).toBeLessThanOrEqual(Math.ceil(chars / 40_960));
  });
});

describe('adversarial input', () => {
  it.each([
    ['digits and spaces', '1 '.repeat(50_000)],
    ['digits and dashes', '1-'.repeat(50_000)],
    ['colons', ':'.repeat(100_000)],
    ['one long word', 'a'.repeat(100_000)],
    ['e-mail look-alike', `a@${'a-'.repeat(50_000)}`],
    ['long mixed token', 'aB3'.repeat(33_000)],
  ])('scans 100 KB of %s in linear time (no catastrophic backtracking)', (_name, text) => {
    const started = performance.now();
    detect(text, ALL);
    // measured ≤ 50 ms on a loaded 2-core machine; backtracking would take seconds to minutes
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
