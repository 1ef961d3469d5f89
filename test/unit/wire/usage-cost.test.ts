import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { spliceUsageCost } from '../../../src/wire/usage-cost.js';

describe('spliceUsageCost', () => {
  it('adds cost as the first field of the top-level usage object and keeps every other byte', () => {
    const body = '{"id":"x","choices":[{"message":{"content":"say \\"usage\\": {"}}],"usage":{"prompt_tokens":3}}';
    const spliced = spliceUsageCost(body, '0.000012')?.toString('utf8');
    expect(JSON.parse(spliced ?? '')).toEqual({ id: 'x', choices: [{ message: { content: 'say "usage": {' } }], usage: { cost: 0.000012, prompt_tokens: 3 } });
    expect(spliced?.replace('"cost":0.000012,', '')).toBe(body);
  });

  it('handles whitespace and an empty usage object; null without a usage object', () => {
    expect(JSON.parse(spliceUsageCost('{ "usage" :\n { } }', '1.5')?.toString('utf8') ?? '')).toEqual({ usage: { cost: 1.5 } });
    expect(spliceUsageCost('{"usage":null}', '1')).toBeNull();
    expect(spliceUsageCost('{"data":[]}', '1')).toBeNull();
  });

  it('property: any JSON object with a usage object stays valid JSON with the same fields plus cost', () => {
    fc.assert(fc.property(fc.dictionary(fc.string().filter((key) => key !== 'usage'), fc.jsonValue()), fc.dictionary(fc.string().filter((key) => key !== 'cost'), fc.integer()), (rest, usage) => {
      const body = JSON.stringify({ ...rest, usage });
      const parsed = JSON.parse(spliceUsageCost(body, '0.25')?.toString('utf8') ?? '') as Record<string, unknown>;
      // Compared through JSON, which has no -0.
      expect(parsed).toEqual(JSON.parse(JSON.stringify({ ...rest, usage: { cost: 0.25, ...usage } })));
    }), { numRuns: 1000 });
  });
});
