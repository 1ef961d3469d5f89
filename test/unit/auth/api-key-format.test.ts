import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { displayHint, hashApiKey, isWellFormedApiKey, issueApiKey } from '../../../src/auth/api-key-format.js';

/** Any Unicode scalar value (no lone surrogates), weighted toward ASCII and multi-byte ranges. */
const anyChar = fc.oneof(
  fc.integer({ min: 0, max: 0x7f }),
  fc.integer({ min: 0x80, max: 0xd7ff }),
  fc.integer({ min: 0xe000, max: 0xffff }),
  fc.integer({ min: 0x10000, max: 0x10ffff }),
).map((code) => String.fromCodePoint(code));

const BRAND = 'unigate';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const sha256 = (text: string): string => createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex');

describe('issueApiKey', () => {
  it('issues sk- keys of 40 base62 characters', () => {
    const key = issueApiKey('sk', BRAND);
    expect(key.plaintext).toMatch(/^sk-[0-9A-Za-z]{40}$/);
    expect(isWellFormedApiKey(key.plaintext, BRAND)).toBe(true);
  });

  it('issues <brand>_sk_live_ keys of 40 base62 characters', () => {
    const key = issueApiKey('brand', BRAND);
    expect(key.plaintext).toMatch(/^unigate_sk_live_[0-9A-Za-z]{40}$/);
    expect(isWellFormedApiKey(key.plaintext, BRAND)).toBe(true);
    expect(isWellFormedApiKey(key.plaintext, 'other')).toBe(false);
  });

  it('never repeats a key over many draws', () => {
    const seen = new Set<string>();
    for (let index = 0; index < 2000; index += 1) {
      seen.add(issueApiKey('sk', BRAND).plaintext.slice(3));
      seen.add(issueApiKey('brand', BRAND).plaintext.slice(BRAND.length + 9));
    }
    expect(seen.size).toBe(4000);
  });

  it('uses every base62 character about equally (no modulo bias)', () => {
    const counts = new Map<string, number>();
    const keys = 2000;
    for (let index = 0; index < keys; index += 1) {
      for (const char of issueApiKey('sk', BRAND).plaintext.slice(3)) counts.set(char, (counts.get(char) ?? 0) + 1);
    }
    expect([...counts.keys()].sort().join('')).toBe([...BASE62].sort().join(''));
    // Expected ≈1290 each (σ ≈ 36); plain `byte % 62` would give '0'..'7' ≈1.25× the others.
    const expected = (keys * 40) / 62;
    for (const [, seen] of counts) {
      expect(seen).toBeGreaterThan(expected * 0.85);
      expect(seen).toBeLessThan(expected * 1.15);
    }
  });

  it('stores the sha256 hex of the full plaintext', () => {
    for (const form of ['sk', 'brand'] as const) {
      const key = issueApiKey(form, BRAND);
      expect(key.secretHash).toMatch(/^[0-9a-f]{64}$/);
      expect(key.secretHash).toBe(sha256(key.plaintext));
      expect(hashApiKey(key.plaintext)).toBe(key.secretHash);
    }
  });

  it('shows a display hint with the prefix and last four characters only', () => {
    const sk = issueApiKey('sk', BRAND);
    expect(sk.displayHint).toBe(`sk-…${sk.plaintext.slice(-4)}`);
    const brand = issueApiKey('brand', BRAND);
    expect(brand.displayHint).toBe(`unigate_sk_live_…${brand.plaintext.slice(-4)}`);
    for (const key of [sk, brand]) {
      const secret = key.plaintext.slice(key.plaintext.length - 40);
      // No five consecutive characters of the secret appear in the hint.
      for (let index = 0; index + 5 <= secret.length; index += 1) expect(key.displayHint).not.toContain(secret.slice(index, index + 5));
    }
  });
});

describe('hashApiKey and displayHint', () => {
  it('hashes any text as sha256 hex of its UTF-8 bytes', () => {
    fc.assert(fc.property(fc.string({ unit: anyChar, maxLength: 64 }), (text) => {
      expect(hashApiKey(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
    }), { numRuns: 200 });
    expect(hashApiKey('sk-a')).not.toBe(hashApiKey('sk-b'));
  });

  it('keeps the brand prefix of brand keys', () => {
    expect(displayHint('acme_sk_live_abcdefghijklmnopqrstuvwxyz')).toBe('acme_sk_live_…wxyz');
    expect(displayHint('sk-abcdefghijklmnopqrstuvwxyz')).toBe('sk-…wxyz');
  });
});

describe('isWellFormedApiKey', () => {
  const secret = (length: number, char = 'a'): string => char.repeat(length);

  it('accepts both forms with 20 to 200 secret characters', () => {
    expect(isWellFormedApiKey(`sk-${secret(20)}`, BRAND)).toBe(true);
    expect(isWellFormedApiKey(`sk-${secret(200)}`, BRAND)).toBe(true);
    expect(isWellFormedApiKey(`${BRAND}_sk_live_${secret(20)}`, BRAND)).toBe(true);
    expect(isWellFormedApiKey('sk-proj_AbC-123_xyz-0987654321', BRAND)).toBe(true);
  });

  it('rejects short and long secrets', () => {
    expect(isWellFormedApiKey(`sk-${secret(19)}`, BRAND)).toBe(false);
    expect(isWellFormedApiKey(`sk-${secret(201)}`, BRAND)).toBe(false);
    expect(isWellFormedApiKey(`${BRAND}_sk_live_${secret(19)}`, BRAND)).toBe(false);
    expect(isWellFormedApiKey('sk-', BRAND)).toBe(false);
  });

  it('rejects other brands and prefixes', () => {
    const body = secret(40, 'Q');
    for (const candidate of [`acme_sk_live_${body}`, `${BRAND}_sk_test_${body}`, `sk_${body}`, `SK-${body}`, `Unigate_sk_live_${body}`, `${BRAND}sk_live_${body}`, body, '']) {
      expect(isWellFormedApiKey(candidate, BRAND)).toBe(false);
    }
  });

  it('rejects characters outside [A-Za-z0-9_-]', () => {
    for (const bad of ['!', ' ', '.', '+', '/', '=', 'é', '\n', '\u0000', '😀']) {
      expect(isWellFormedApiKey(`sk-${secret(30)}${bad}${secret(5)}`, BRAND)).toBe(false);
    }
  });

  it('rejects input over 256 characters even when the secret length is allowed', () => {
    const brand = 'b'.repeat(50);
    const prefix = `${brand}_sk_live_`; // 59 characters
    expect(isWellFormedApiKey(prefix + secret(256 - 59), brand)).toBe(true);
    expect(isWellFormedApiKey(prefix + secret(257 - 59), brand)).toBe(false);
    expect(isWellFormedApiKey(`sk-${secret(10_000)}`, BRAND)).toBe(false);
  });

  it('agrees with the stated shape for random candidates', () => {
    const candidate = fc.tuple(fc.constantFrom('sk-', `${BRAND}_sk_live_`, 'acme_sk_live_', ''), fc.string({ unit: fc.constantFrom('a', 'Z', '9', '_', '-', '.', ' ', 'é'), maxLength: 220 }));
    fc.assert(fc.property(candidate, ([prefix, body]) => {
      const text = prefix + body;
      const expected = (prefix === 'sk-' || prefix === `${BRAND}_sk_live_`) && /^[A-Za-z0-9_-]{20,200}$/.test(body) && text.length <= 256;
      expect(isWellFormedApiKey(text, BRAND)).toBe(expected);
    }), { numRuns: 500 });
  });
});
