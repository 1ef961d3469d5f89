/**
 * Balancing strategies: the tickets feed in-flight counts and time-to-first-byte averages; least-latency and
 * least-in-flight order within a priority tier (never across tiers), weight-0 channels stay last, and a caller's
 * preference rank comes before all of it.
 */
import { describe, expect, it } from 'vitest';
import type { ChannelRoute } from '../../../src/routing/catalog.js';
import { ChannelHealth } from '../../../src/routing/channel-health.js';
import { ChannelLoad } from '../../../src/routing/channel-load.js';
import { LATENCY_EXPLORATION_SHARE, orderCandidates } from '../../../src/routing/order-candidates.js';
import { RoutePlan } from '../../../src/routing/route-plan.js';
import { InMemoryRateLimiter } from '../../../src/limits/in-memory-rate-limiter.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { channel, T0 } from './routing-fixtures.js';

const POLICY = { failureThreshold: 3, failureRatePercent: 100, minimumRequests: 1000, windowMs: 60_000, cooldownMs: 1000, maxCooldownMs: 60_000 };

function route(id: string, priority = 0, weight = 1): ChannelRoute {
  return { channel: channel(id, { priority, weight }), upstreamModel: `up-${id}` };
}

function names(routes: readonly ChannelRoute[]): string[] {
  return routes.map((entry) => entry.channel.id);
}

/** A random source that never explores (draws above the exploration share). */
const steady = (): number => 0.9;

describe('ChannelLoad through attempt tickets', () => {
  it('counts an attempt in flight from its ticket to its verdict, once', () => {
    const clock = new ManualClock(T0);
    const health = new ChannelHealth(POLICY, clock, silentLogger);
    const one = channel('one');
    const first = health.acquire(one, 'alpha');
    const second = health.acquire(one, 'alpha');
    expect(health.load.inFlight('one')).toBe(2);
    first?.succeeded();
    first?.release();
    expect(health.load.inFlight('one')).toBe(1);
    second?.failed({ failureClass: 'server_error', retryAfterMs: null });
    expect(health.load.inFlight('one')).toBe(0);
    expect(health.load.lastAttemptAt('one')).toBe(T0);
  });

  it('takes time to first byte at `answered`, else at success, as a moving average', () => {
    const clock = new ManualClock(T0);
    const health = new ChannelHealth(POLICY, clock, silentLogger);
    const one = channel('one');
    const streamed = health.acquire(one, 'alpha');
    clock.advance(100);
    streamed?.answered();
    clock.advance(5000);
    streamed?.succeeded();
    expect(health.load.latencyMs('one', 'alpha')).toBe(100);
    const unary = health.acquire(one, 'alpha');
    clock.advance(200);
    unary?.succeeded();
    expect(health.load.latencyMs('one', 'alpha')).toBeCloseTo(130);
    expect(health.load.latencyMs('one', 'beta')).toBeNull();
  });

  it('a first-byte timeout counts as that much latency; other failures and aborts do not', () => {
    const clock = new ManualClock(T0);
    const health = new ChannelHealth(POLICY, clock, silentLogger);
    const one = channel('one');
    const refused = health.acquire(one, 'alpha');
    clock.advance(50);
    refused?.release();
    expect(health.load.latencyMs('one', 'alpha')).toBeNull();
    const slow = health.acquire(one, 'alpha');
    clock.advance(3000);
    slow?.failed({ failureClass: 'first_byte_timeout', retryAfterMs: null });
    expect(health.load.latencyMs('one', 'alpha')).toBe(3000);
  });

  it('forgets a channel an admin changed or deleted', () => {
    const clock = new ManualClock(T0);
    const health = new ChannelHealth(POLICY, clock, silentLogger);
    const one = channel('one');
    health.acquire(one, 'alpha')?.succeeded();
    health.syncChannels([]);
    expect(health.load.latencyMs('one', 'alpha')).toBeNull();
    expect(health.load.lastAttemptAt('one')).toBeNull();
  });
});

describe('orderCandidates with a balancing strategy', () => {
  it('least-latency puts the fastest channel of the highest tier first, never a faster lower tier', () => {
    const load = new ChannelLoad();
    load.recordFirstByte('slow', 'alpha', 900);
    load.recordFirstByte('fast', 'alpha', 50);
    load.recordFirstByte('faster-backup', 'alpha', 5);
    const routes = [route('slow', 10), route('fast', 10), route('faster-backup', 0)];
    for (let draw = 0; draw < 20; draw += 1) {
      expect(names(orderCandidates(routes, steady, { strategy: 'least-latency', model: 'alpha', load }))).toEqual(['fast', 'slow', 'faster-backup']);
    }
  });

  it('least-latency tries a channel with no figure yet first, and explores by weight on a small share of requests', () => {
    const load = new ChannelLoad();
    load.recordFirstByte('known', 'alpha', 10);
    const routes = [route('known'), route('new')];
    expect(names(orderCandidates(routes, steady, { strategy: 'least-latency', model: 'alpha', load }))[0]).toBe('new');
    load.recordFirstByte('new', 'alpha', 500);
    expect(names(orderCandidates(routes, steady, { strategy: 'least-latency', model: 'alpha', load }))[0]).toBe('known');
    // Exploring: the weighted order alone decides; with equal draws it keeps the input order, slower channel first.
    let draws = 0;
    const exploring = (): number => (draws++ === 0 ? LATENCY_EXPLORATION_SHARE / 2 : 0.5);
    expect(names(orderCandidates([route('new'), route('known')], exploring, { strategy: 'least-latency', model: 'alpha', load }))).toEqual(['new', 'known']);
  });

  it('least-in-flight puts the channel with the fewest attempts per unit of weight first; weight 0 stays last', () => {
    const load = new ChannelLoad();
    load.started('busy', T0);
    load.started('busy', T0);
    load.started('heavy', T0);
    load.started('heavy', T0);
    const routes = [route('busy', 0, 1), route('heavy', 0, 4), route('idle-backup', 0, 0)];
    // busy: 2/1, heavy: 2/4.
    expect(names(orderCandidates(routes, steady, { strategy: 'least-in-flight', model: 'alpha', load }))).toEqual(['heavy', 'busy', 'idle-backup']);
  });

  it('a caller preference rank comes before priority and strategy; unranked routes follow in the usual order', () => {
    const load = new ChannelLoad();
    const routes = [{ ...route('top', 10) }, { ...route('second', 5), preferenceRank: 1 }, { ...route('first', 0), preferenceRank: 0 }, route('mid', 7)];
    expect(names(orderCandidates(routes, steady, { strategy: 'weighted', model: 'alpha', load }))).toEqual(['first', 'second', 'top', 'mid']);
  });

  it('the route plan spreads concurrent attempts of a least-in-flight model over its channels', async () => {
    const clock = new ManualClock(T0);
    const health = new ChannelHealth(POLICY, clock, silentLogger);
    const dependencies = { health, limiter: new InMemoryRateLimiter(), clock, maxAttempts: 3, retryBudgetMs: 30_000, strategyOf: () => 'least-in-flight' as const };
    const routes = [route('a'), route('b'), route('c')];
    const first: string[] = [];
    for (let request = 0; request < 6; request += 1) {
      const candidate = await new RoutePlan(dependencies, routes, 'alpha', 10).next();
      first.push(candidate?.route.channel.id ?? '');
    }
    expect(first.filter((id) => id === 'a')).toHaveLength(2);
    expect(first.filter((id) => id === 'b')).toHaveLength(2);
    expect(first.filter((id) => id === 'c')).toHaveLength(2);
  });
});
