import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ChannelRoute } from '../../../src/routing/catalog.js';
import { orderCandidates } from '../../../src/routing/order-candidates.js';
import type { Channel } from '../../../src/domain/records.js';

function route(name: string, priority: number, weight: number): ChannelRoute {
  const channel: Channel = {
    id: `ch_${name}`, name, type: 'openai' as Channel['type'], baseUrl: null, apiKeys: ['k'], models: {}, priority, weight, enabled: true, headers: {}, settings: {},
    createdAt: 0, updatedAt: 0,
  };
  return { channel, upstreamModel: 'm' };
}

/** mulberry32: a small seeded PRNG in [0, 1). */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function firstShares(routes: ChannelRoute[], draws: number, seed: number): Map<string, number> {
  const random = seeded(seed);
  const counts = new Map<string, number>();
  for (let index = 0; index < draws; index += 1) {
    const first = orderCandidates(routes, random)[0]?.channel.name ?? '';
    counts.set(first, (counts.get(first) ?? 0) + 1);
  }
  return new Map([...counts].map(([name, count]) => [name, count / draws]));
}

describe('orderCandidates', () => {
  it('returns a copy for zero or one route', () => {
    const one = [route('a', 0, 1)];
    expect(orderCandidates([])).toEqual([]);
    const ordered = orderCandidates(one);
    expect(ordered).toEqual(one);
    expect(ordered).not.toBe(one);
  });

  it('does not modify its input', () => {
    const routes = [route('a', 0, 1), route('b', 5, 1), route('c', 0, 3)];
    const before = [...routes];
    orderCandidates(routes, seeded(1));
    expect(routes).toEqual(before);
  });

  it('puts higher priority strictly first, whatever the weights', () => {
    const routes = [route('low', 0, 1000), route('high', 10, 0.001), route('mid', 5, 1000), route('high2', 10, 1)];
    const random = seeded(42);
    for (let index = 0; index < 1000; index += 1) {
      const names = orderCandidates(routes, random).map((candidate) => candidate.channel.name);
      expect(new Set(names.slice(0, 2))).toEqual(new Set(['high', 'high2']));
      expect(names.slice(2)).toEqual(['mid', 'low']);
    }
  });

  it('gives each channel its weight share of first attempts (3:1)', () => {
    const shares = firstShares([route('a', 0, 3), route('b', 0, 1)], 20_000, 7);
    expect(shares.get('a')).toBeGreaterThan(0.72);
    expect(shares.get('a')).toBeLessThan(0.78);
  });

  it('gives each channel its weight share of first attempts (1:1:2)', () => {
    const shares = firstShares([route('a', 0, 1), route('b', 0, 1), route('c', 0, 2)], 20_000, 99);
    expect(Math.abs((shares.get('a') ?? 0) - 0.25)).toBeLessThan(0.03);
    expect(Math.abs((shares.get('b') ?? 0) - 0.25)).toBeLessThan(0.03);
    expect(Math.abs((shares.get('c') ?? 0) - 0.5)).toBeLessThan(0.03);
  });

  it('weights only apply within a priority', () => {
    const shares = firstShares([route('a', 1, 1), route('b', 1, 3), route('c', 0, 100)], 20_000, 3);
    expect(shares.get('c')).toBeUndefined();
    expect(Math.abs((shares.get('b') ?? 0) - 0.75)).toBeLessThan(0.03);
  });

  it('never puts a weight-0 channel first when another channel of its priority has weight', () => {
    const random = seeded(5);
    const routes = [route('zero', 0, 0), route('zero2', 0, 0), route('one', 0, 1)];
    const mixed = [route('zero', 0, 0), route('half', 0, 0.5), route('three', 0, 3)];
    for (let index = 0; index < 3000; index += 1) {
      expect(orderCandidates(routes, random)[0]?.channel.name).toBe('one');
      expect(orderCandidates(mixed, random)[0]?.channel.name).not.toBe('zero');
    }
  });

  it('puts weight-0 channels after every weighted channel of the same priority', () => {
    const random = seeded(11);
    const routes = [route('zero', 0, 0), route('a', 0, 1), route('b', 0, 2), route('other', -1, 5)];
    for (let index = 0; index < 2000; index += 1) {
      const names = orderCandidates(routes, random).map((candidate) => candidate.channel.name);
      expect(names.indexOf('zero')).toBe(2);
      expect(names[3]).toBe('other');
    }
  });

  it('always returns a permutation sorted by descending priority', () => {
    const routesArb = fc.array(fc.record({ priority: fc.integer({ min: -5, max: 5 }), weight: fc.oneof(fc.constant(0), fc.double({ min: 0.001, max: 100, noNaN: true })) }),
      { minLength: 0, maxLength: 8 });
    fc.assert(fc.property(routesArb, fc.integer(), (specs, seed) => {
      const routes = specs.map((spec, index) => route(`r${index}`, spec.priority, spec.weight));
      const ordered = orderCandidates(routes, seeded(seed));
      expect([...ordered].sort((a, b) => a.channel.name.localeCompare(b.channel.name))).toEqual([...routes].sort((a, b) => a.channel.name.localeCompare(b.channel.name)));
      for (let index = 1; index < ordered.length; index += 1) {
        expect((ordered[index - 1] as ChannelRoute).channel.priority).toBeGreaterThanOrEqual((ordered[index] as ChannelRoute).channel.priority);
      }
    }), { numRuns: 300 });
  });
});
