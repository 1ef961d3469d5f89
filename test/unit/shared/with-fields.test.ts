import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withFields } from '../../../src/shared/with-fields.js';

/** Own keys with their values and descriptors, in order: what a spread's copy is made of. */
function ownEntries(value: object): Array<[string, PropertyDescriptor | undefined]> {
  return Reflect.ownKeys(value).map((key) => [String(key), Object.getOwnPropertyDescriptor(value, key)]);
}

describe('withFields', () => {
  it('property: makes what { ...base, ...extra } makes, keys in the same order, for any JSON objects', () => {
    fc.assert(fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.dictionary(fc.string(), fc.jsonValue()), (left, right) => {
      // Through JSON.parse, as request bodies arrive: a "__proto__" key is then an own key.
      const base = JSON.parse(JSON.stringify(left)) as Record<string, unknown>;
      const extra = JSON.parse(JSON.stringify(right)) as Record<string, unknown>;
      const made = withFields(base, extra);
      const spread = { ...base, ...extra };
      expect(ownEntries(made)).toEqual(ownEntries(spread));
      expect(Object.getPrototypeOf(made)).toBe(Object.prototype);
      expect(JSON.stringify(made)).toBe(JSON.stringify(spread));
    }), { numRuns: 300 });
  });

  it('keeps an own __proto__ key as a key, never as the prototype', () => {
    const base = JSON.parse('{"model":"a","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const made = withFields(base, { model: 'b' });
    expect(Object.getPrototypeOf(made)).toBe(Object.prototype);
    expect((made as { polluted?: unknown }).polluted).toBeUndefined();
    expect(JSON.stringify(made)).toBe('{"model":"b","__proto__":{"polluted":true}}');
  });

  it('does not change its arguments', () => {
    const base = { a: 1 };
    const extra = { b: 2 };
    expect(withFields(base, extra)).toEqual({ a: 1, b: 2 });
    expect(base).toEqual({ a: 1 });
    expect(extra).toEqual({ b: 2 });
  });
});
