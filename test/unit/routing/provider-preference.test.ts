/**
 * The caller's provider preference as a pure function over routes: what it keeps is a subset of what it was
 * given, `only` and `ignore` always hold, `order` ranks named channels first in its order, `sort` ranks by price
 * or latency, routes it cannot tell apart keep their order; the parser refuses malformed objects with a 400.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors/gateway-error.js';
import type { ChannelRoute } from '../../../src/routing/catalog.js';
import { orderCandidates } from '../../../src/routing/order-candidates.js';
import { parseProviderPreference, parseProviderPreferenceHeader } from '../../../src/routing/parse-provider-preference.js';
import { applyProviderPreference, matchesAny, type PreferenceFacts, type ProviderPreference } from '../../../src/routing/provider-preference.js';
import type { Channel } from '../../../src/storage/records.js';
import { channel } from './routing-fixtures.js';

const TYPES: Channel['type'][] = ['openai', 'anthropic', 'gemini', 'azure-openai', 'groq'];
const NAMES = ['Primary', 'backup-eu', 'Azure West', 'cheap', 'fast'];
const ENTRIES = [...NAMES, ...TYPES, 'google', 'unknown', 'AZURE-WEST'];

function route(id: string, type: Channel['type'], name: string): ChannelRoute {
  return { channel: channel(id, { type, name }), upstreamModel: `up-${id}` };
}

const routesArbitrary = fc.array(fc.tuple(fc.constantFrom(...TYPES), fc.constantFrom(...NAMES)), { maxLength: 8 })
  .map((pairs) => pairs.map(([type, name], index) => route(`c${index}`, type, name)));

const preferenceArbitrary: fc.Arbitrary<ProviderPreference> = fc.record({
  order: fc.array(fc.constantFrom(...ENTRIES), { maxLength: 4 }),
  allowFallbacks: fc.boolean(),
  only: fc.array(fc.constantFrom(...ENTRIES), { minLength: 1, maxLength: 4 }),
  ignore: fc.array(fc.constantFrom(...ENTRIES), { maxLength: 3 }),
  sort: fc.constantFrom('price' as const, 'latency' as const),
  maxPrice: fc.record({ promptPerMtokNano: fc.bigInt({ min: 0n, max: 10n }) }, { requiredKeys: [] }),
}, { requiredKeys: [] });

/** Latency and price per channel id, deterministic so properties can check orders. */
const facts: PreferenceFacts = {
  latencyMs: (entry) => (Number(entry.channel.id.slice(1)) % 3 === 0 ? null : (Number(entry.channel.id.slice(1)) * 37) % 11),
  priceOf: (entry) => ({ promptPerMtokNano: BigInt((Number(entry.channel.id.slice(1)) * 7) % 13), completionPerMtokNano: null }),
};

const ids = (routes: readonly ChannelRoute[]): string[] => routes.map((entry) => entry.channel.id);

describe('applyProviderPreference', () => {
  it('keeps a subset of the routes it was given, each unchanged apart from its rank', () => {
    fc.assert(fc.property(routesArbitrary, preferenceArbitrary, (routes, preference) => {
      const result = applyProviderPreference(routes, preference, facts);
      const given = new Map(routes.map((entry) => [entry.channel.id, entry]));
      expect(new Set(ids(result)).size).toBe(result.length);
      for (const entry of result) {
        const original = given.get(entry.channel.id);
        expect(original).toBeDefined();
        expect(entry.channel).toBe(original?.channel);
        expect(entry.upstreamModel).toBe(original?.upstreamModel);
      }
    }));
  });

  it('respects only and ignore, and keeps every route they allow unless max_price or allow_fallbacks removes it', () => {
    fc.assert(fc.property(routesArbitrary, preferenceArbitrary, (routes, preference) => {
      const result = applyProviderPreference(routes, preference, facts);
      for (const entry of result) {
        if (preference.only !== undefined) expect(matchesAny(entry, preference.only)).toBe(true);
        if (preference.ignore !== undefined) expect(matchesAny(entry, preference.ignore)).toBe(false);
      }
      const narrowingOnly: ProviderPreference = {};
      if (preference.only !== undefined) narrowingOnly.only = preference.only;
      if (preference.ignore !== undefined) narrowingOnly.ignore = preference.ignore;
      const allowed = routes.filter((entry) => (preference.only === undefined || matchesAny(entry, preference.only)) && (preference.ignore === undefined || !matchesAny(entry, preference.ignore)));
      expect(ids(applyProviderPreference(routes, narrowingOnly, facts))).toEqual(ids(allowed));
    }));
  });

  it('is stable: routes the preference ranks alike keep their input order, and ranks never decrease', () => {
    fc.assert(fc.property(routesArbitrary, preferenceArbitrary, (routes, preference) => {
      const result = applyProviderPreference(routes, preference, facts);
      const inputIndex = new Map(routes.map((entry, index) => [entry.channel.id, index]));
      for (let index = 1; index < result.length; index += 1) {
        const before = result[index - 1] as ChannelRoute;
        const after = result[index] as ChannelRoute;
        const rankBefore = before.preferenceRank ?? Number.POSITIVE_INFINITY;
        const rankAfter = after.preferenceRank ?? Number.POSITIVE_INFINITY;
        expect(rankBefore).toBeLessThanOrEqual(rankAfter);
        if (rankBefore === rankAfter) expect(inputIndex.get(before.channel.id)).toBeLessThan(inputIndex.get(after.channel.id) as number);
      }
      expect(ids(applyProviderPreference(routes, preference, facts))).toEqual(ids(result));
    }));
  });

  it('puts channels named by order first, in its order, ahead of the operator priority', () => {
    const routes = [route('c0', 'openai', 'Primary'), route('c1', 'anthropic', 'cheap'), route('c2', 'azure-openai', 'Azure West'), route('c3', 'gemini', 'fast')];
    routes[0] = { ...routes[0] as ChannelRoute, channel: { ...(routes[0] as ChannelRoute).channel, priority: 100 } };
    const preferred = applyProviderPreference(routes, { order: ['azure west', 'Google'] }, facts);
    expect(ids(preferred)).toEqual(['c2', 'c3', 'c0', 'c1']);
    expect(preferred.map((entry) => entry.preferenceRank)).toEqual([0, 1, undefined, undefined]);
    expect(ids(orderCandidates(preferred, () => 0.5))).toEqual(['c2', 'c3', 'c0', 'c1']);
    expect(ids(applyProviderPreference(routes, { order: ['azure west', 'google'], allowFallbacks: false }, facts))).toEqual(['c2', 'c3']);
  });

  it('sorts by latency (unknown last) or price, and leaves out channels above max_price', () => {
    const routes = [route('c1', 'openai', 'Primary'), route('c2', 'openai', 'cheap'), route('c3', 'openai', 'fast'), route('c4', 'openai', 'backup-eu')];
    // Latency: c1 37%11=4, c2 74%11=8, c3 unknown, c4 148%11=5.
    expect(ids(applyProviderPreference(routes, { sort: 'latency' }, facts))).toEqual(['c1', 'c4', 'c2', 'c3']);
    // Price: c1 7, c2 1, c3 8, c4 2.
    expect(ids(applyProviderPreference(routes, { sort: 'price' }, facts))).toEqual(['c2', 'c4', 'c1', 'c3']);
    expect(ids(applyProviderPreference(routes, { maxPrice: { promptPerMtokNano: 2n } }, facts))).toEqual(['c2', 'c4']);
  });
});

describe('parseProviderPreference', () => {
  it('reads the OpenRouter object, max_price in USD per million tokens exactly', () => {
    expect(parseProviderPreference({ order: ['openai'], allow_fallbacks: false, only: ['openai', 'azure'], ignore: ['groq'], sort: 'price', max_price: { prompt: 1.5, completion: '0.000000001' } }, 'provider')).toEqual({
      order: ['openai'], allowFallbacks: false, only: ['openai', 'azure'], ignore: ['groq'], sort: 'price', maxPrice: { promptPerMtokNano: 1_500_000_000n, completionPerMtokNano: 1n },
    });
    expect(parseProviderPreference(null, 'provider')).toBeNull();
    expect(parseProviderPreference(undefined, 'provider')).toBeNull();
  });

  it.each([
    ['a string', 'openai', 'provider'],
    ['a bad sort', { sort: 'throughput' }, 'provider.sort'],
    ['a list that is not one', { only: 'openai' }, 'provider.only'],
    ['an empty name', { ignore: [''] }, 'provider.ignore.0'],
    ['a negative price', { max_price: { prompt: -1 } }, 'provider.max_price.prompt'],
    ['an unsupported field', { data_collection: 'deny' }, 'provider'],
  ])('refuses %s with a 400 naming the field', (_label, raw, param) => {
    let thrown: unknown;
    try {
      parseProviderPreference(raw, 'provider');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GatewayError);
    expect(thrown).toMatchObject({ status: 400, code: 'bad_request', param });
  });

  it('reads the header form, and refuses a header that is not JSON', () => {
    expect(parseProviderPreferenceHeader('{"only":["anthropic"]}', 'x-gateway-provider')).toEqual({ only: ['anthropic'] });
    expect(() => parseProviderPreferenceHeader('only=anthropic', 'x-gateway-provider')).toThrow(GatewayError);
  });
});
