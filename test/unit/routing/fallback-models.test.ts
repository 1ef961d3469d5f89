import { describe, expect, it } from 'vitest';
import { fallbackModelNames, MAX_FALLBACK_MODELS } from '../../../src/routing/fallback-models.js';

const graph: Record<string, string[]> = { a: ['b', 'c'], b: ['d', 'a'], c: ['a-alias'], d: [] };
const ids: Record<string, string> = { a: 'a', 'a-alias': 'a', b: 'b', c: 'c', d: 'd' };
const chain = (primary: string, requested: string[] | null): string[] => fallbackModelNames(primary, requested, (name) => graph[name] ?? [], (name) => ids[name]);

describe('fallbackModelNames', () => {
  it('follows the operator fallbacks breadth first, each model once (cycles and aliases included)', () => {
    expect(chain('a', null)).toEqual(['a', 'b', 'c', 'd']);
    expect(chain('a-alias', null)).toEqual(['a-alias']);
    expect(chain('d', null)).toEqual(['d']);
  });

  it('a caller list replaces the operator fallbacks and is not expanded; the named model comes first', () => {
    expect(chain('b', ['c', 'b', 'a-alias', 'a'])).toEqual(['b', 'c', 'a-alias']);
    expect(chain('x', ['y'])).toEqual(['x', 'y']);
  });

  it('stops at the bound', () => {
    const long = Array.from({ length: 20 }, (_, index) => `m${index}`);
    expect(fallbackModelNames('m0', null, (name) => (name === 'm0' ? long : []), () => undefined)).toHaveLength(MAX_FALLBACK_MODELS + 1);
  });
});
