import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CODE_BODY_LENGTH, hashRedemptionCode, issueRedemptionCode, parseRedemptionCode } from '../../../src/redemption/redemption-code.js';

describe('redemption codes', () => {
  it('are issued with the brand prefix in groups of five and hash to what parsing finds', () => {
    const issued = issueRedemptionCode('unigate');
    expect(issued.plaintext).toMatch(/^UNIGATE(-[0-9A-HJKMNP-TV-Z]{5}){5}$/);
    expect(issued.hint).toBe(`UNIGATE-…${issued.plaintext.slice(-4)}`);
    expect(parseRedemptionCode(issued.plaintext)?.codeHash).toBe(issued.codeHash);
    expect(issued.codeHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('are distinct (CSPRNG)', () => {
    const seen = new Set(Array.from({ length: 2000 }, () => issueRedemptionCode('unigate').codeHash));
    expect(seen.size).toBe(2000);
  });

  it('read forgivingly: case, spaces, hyphens, O/I/L and the prefix do not matter', () => {
    fc.assert(fc.property(fc.constantFrom('lower', 'spaces', 'noprefix', 'otherbrand', 'lookalikes'), (variant) => {
      const issued = issueRedemptionCode('unigate');
      const body = issued.plaintext.slice('UNIGATE-'.length);
      let typed = issued.plaintext;
      if (variant === 'lower') typed = typed.toLowerCase();
      if (variant === 'spaces') typed = ` ${typed.replace(/-/g, ' ')} `;
      if (variant === 'noprefix') typed = body;
      if (variant === 'otherbrand') typed = `ACME-${body}`;
      if (variant === 'lookalikes') typed = typed.replace(/0/g, 'O').replace(/1/g, 'l');
      expect(parseRedemptionCode(typed)?.codeHash).toBe(issued.codeHash);
    }), { numRuns: 200 });
  });

  it('refuse what cannot be a code without throwing', () => {
    fc.assert(fc.property(fc.string({ maxLength: 120 }), (text) => {
      const parsed = parseRedemptionCode(text);
      if (parsed !== null) {
        expect(parsed.body).toHaveLength(CODE_BODY_LENGTH);
        expect(parsed.codeHash).toBe(hashRedemptionCode(parsed.body));
      }
    }), { numRuns: 2000 });
    expect(parseRedemptionCode('')).toBeNull();
    expect(parseRedemptionCode('UNIGATE-ABCDE')).toBeNull();
    expect(parseRedemptionCode(`UNIGATE-${'U'.repeat(25)}`)).toBeNull();
    expect(parseRedemptionCode(`UNI_GATE-${'A'.repeat(25)}`)).toBeNull();
    expect(parseRedemptionCode(`${'A'.repeat(200)}`)).toBeNull();
  });
});
