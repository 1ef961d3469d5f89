import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exceedsJsonDepth, MAX_JSON_DEPTH } from '../../../src/wire/json-depth.js';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');
const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

/** The depth JSON.parse sees, by walking the parsed value (the reference the scan must agree with). */
function parsedDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce<number>((deepest, child) => Math.max(deepest, parsedDepth(child)), 0);
}

describe('exceedsJsonDepth', () => {
  it('allows exactly the limit and refuses one level more, for arrays and objects', () => {
    expect(exceedsJsonDepth(bytes(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(exceedsJsonDepth(bytes(nested(MAX_JSON_DEPTH + 1)))).toBe(true);
    expect(exceedsJsonDepth(bytes(`${'{"a":'.repeat(MAX_JSON_DEPTH + 1)}1${'}'.repeat(MAX_JSON_DEPTH + 1)}`))).toBe(true);
    expect(exceedsJsonDepth(bytes(nested(100_000)))).toBe(true);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(exceedsJsonDepth(bytes(JSON.stringify({ text: '['.repeat(1000) })))).toBe(false);
    expect(exceedsJsonDepth(bytes(JSON.stringify({ text: `\\"${'{'.repeat(500)}\\\\` , more: '"[[[' })))).toBe(false);
    expect(exceedsJsonDepth(bytes(`{"a":"\\\\"}${nested(MAX_JSON_DEPTH + 1)}`))).toBe(true);
  });

  it('leaves malformed text to JSON.parse', () => {
    expect(exceedsJsonDepth(bytes(`{"a":"${'['.repeat(200)}`))).toBe(false);
    expect(exceedsJsonDepth(bytes(']]]]'))).toBe(false);
  });

  it('agrees with the depth of the parsed value for any JSON', () => {
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 8 }), fc.integer({ min: 1, max: 8 }), (value, limit) => {
      const text = JSON.stringify(value);
      expect(exceedsJsonDepth(bytes(text), limit)).toBe(parsedDepth(JSON.parse(text)) > limit);
    }), { seed: 42, numRuns: 2000 });
  });
});
