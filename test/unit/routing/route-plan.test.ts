/**
 * The route plan: routing order, open breakers skipped, the least recently failed tried when all are open,
 * per-channel-model limits, bounded attempts and time.
 */
import { describe, expect, it } from 'vitest';
import { InMemoryRateLimiter } from '../../../src/limits/in-memory-rate-limiter.js';
import type { ChannelRoute } from '../../../src/routing/catalog.js';
import { ChannelHealth } from '../../../src/routing/channel-health.js';
import { RoutePlan, type RoutingDependencies } from '../../../src/routing/route-plan.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { silentLogger } from '../../../src/shared/logger.js';
import { channel } from './routing-fixtures.js';

/** 40 s into a minute window: a limited request waits 20 s. */
const T0 = 1_700_000_080_000;

function setup(overrides: Partial<Omit<RoutingDependencies, 'clock'>> = {}): RoutingDependencies & { clock: ManualClock } {
  const clock = new ManualClock(T0);
  const health = new ChannelHealth({ failureThreshold: 1, failureRatePercent: 100, minimumRequests: 1000, windowMs: 60_000, cooldownMs: 10_000, maxCooldownMs: 60_000 }, clock, silentLogger);
  return { health, limiter: new InMemoryRateLimiter(), maxAttempts: 3, retryBudgetMs: 30_000, random: () => 0.5, ...overrides, clock };
}

function route(id: string, priority: number, settings: Record<string, unknown> = {}): ChannelRoute {
  return { channel: channel(id, { priority, settings }), upstreamModel: `up-${id}` };
}

async function drain(plan: RoutePlan): Promise<string[]> {
  const tried: string[] = [];
  for (let candidate = await plan.next(); candidate !== null; candidate = await plan.next()) {
    tried.push(candidate.route.channel.id);
    candidate.ticket.failed({ failureClass: 'server_error', retryAfterMs: null });
  }
  return tried;
}

describe('RoutePlan', () => {
  it('tries channels by priority, at most maxAttempts', async () => {
    const routes = [route('low', 0), route('high', 10), route('mid', 5), route('lowest', -1)];
    const plan = new RoutePlan(setup(), routes, 'alpha', 10);
    expect(await drain(plan)).toEqual(['high', 'mid', 'low']);
    expect(plan.exhaustion).toEqual({ kind: 'attempts' });
  });

  it('skips channels whose breaker is open', async () => {
    const dependencies = setup();
    const routes = [route('a', 10), route('b', 5), route('c', 0)];
    dependencies.health.acquire(routes[0]!.channel, 'alpha')?.failed({ failureClass: 'server_error', retryAfterMs: null });
    expect(await drain(new RoutePlan(dependencies, routes, 'alpha', 10))).toEqual(['b', 'c']);
  });

  it('when every channel is open, tries the one that failed least recently, once', async () => {
    const dependencies = setup();
    const routes = [route('a', 10), route('b', 5), route('c', 0)];
    for (const id of ['b', 'a', 'c']) {
      dependencies.health.acquire(routes.find((entry) => entry.channel.id === id)!.channel, 'alpha')?.failed({ failureClass: 'server_error', retryAfterMs: null });
      dependencies.clock.advance(10);
    }
    const plan = new RoutePlan(dependencies, routes, 'alpha', 10);
    const first = await plan.next();
    expect(first?.route.channel.id).toBe('b');
    expect(first?.ticket.forced).toBe(true);
    first?.ticket.failed({ failureClass: 'server_error', retryAfterMs: null });
    expect(await plan.next()).toBeNull();
  });

  it('does not force an open channel once a real attempt was made', async () => {
    const dependencies = setup();
    const routes = [route('a', 10), route('b', 5)];
    dependencies.health.acquire(routes[1]!.channel, 'alpha')?.failed({ failureClass: 'server_error', retryAfterMs: null });
    expect(await drain(new RoutePlan(dependencies, routes, 'alpha', 10))).toEqual(['a']);
  });

  it('stops starting attempts once the retry budget is spent, and caps a retry\'s first-byte wait by what is left', async () => {
    const dependencies = setup({ retryBudgetMs: 1000 });
    const routes = [route('a', 10), route('b', 5), route('c', 0)];
    const plan = new RoutePlan(dependencies, routes, 'alpha', 10);
    const first = await plan.next();
    expect(plan.timeouts(first!, { firstByteMs: 5000, idleMs: 7000 })).toEqual({ firstByteMs: 5000, idleMs: 7000 });
    first!.ticket.failed({ failureClass: 'server_error', retryAfterMs: null });
    dependencies.clock.advance(600);
    const second = await plan.next();
    expect(plan.timeouts(second!, { firstByteMs: 5000, idleMs: 7000 })).toEqual({ firstByteMs: 400, idleMs: 7000 });
    second!.ticket.failed({ failureClass: 'server_error', retryAfterMs: null });
    dependencies.clock.advance(400);
    expect(await plan.next()).toBeNull();
    expect(plan.exhaustion).toEqual({ kind: 'budget' });
  });

  it('skips a channel-model at its own RPM, and reports the wait when every one is', async () => {
    const dependencies = setup();
    const limited = { model_limits: { alpha: { rpm: 1 } } };
    const routes = [route('a', 10, limited), route('b', 5, limited)];
    const first = new RoutePlan(dependencies, routes, 'alpha', 10);
    const a = await first.next();
    a!.ticket.succeeded();
    expect(a!.route.channel.id).toBe('a');
    const second = new RoutePlan(dependencies, routes, 'alpha', 10);
    const b = await second.next();
    expect(b!.route.channel.id).toBe('b');
    b!.ticket.succeeded();
    const third = new RoutePlan(dependencies, routes, 'alpha', 10);
    expect(await third.next()).toBeNull();
    expect(third.exhaustion).toEqual({ kind: 'limited', retryAfterMs: 20_000 });
    // Other models of the same channels are not limited.
    expect((await new RoutePlan(dependencies, routes, 'beta', 10).next())?.route.channel.id).toBe('a');
  });

  it('charges TPM with the estimate and skips the channel-model when the estimate does not fit', async () => {
    const dependencies = setup();
    const routes = [route('a', 10, { model_limits: { alpha: { tpm: 100 } } }), route('b', 5)];
    const plan = new RoutePlan(dependencies, routes, 'alpha', 60);
    const first = await plan.next();
    expect(first?.tokenCharge).toMatchObject({ estimate: 60, rule: { id: 'channel-model:a:alpha:tpm', limit: 100 } });
    first!.ticket.succeeded();
    const next = await new RoutePlan(dependencies, routes, 'alpha', 60).next();
    expect(next?.route.channel.id).toBe('b');
    expect(next?.tokenCharge).toBeNull();
  });

  it('answers at once when no channel-model limit has to be consumed, and only then through the limiter', async () => {
    const dependencies = setup();
    const routes = [route('a', 10, { model_limits: { alpha: { rpm: 1 } } }), route('b', 5)];
    const plain = new RoutePlan(dependencies, routes, 'beta', 10).next();
    expect(plain).not.toBeInstanceOf(Promise);
    expect((plain as Awaited<typeof plain>)?.route.channel.id).toBe('a');
    const limited = new RoutePlan(dependencies, routes, 'alpha', 10).next();
    expect(limited).toBeInstanceOf(Promise);
    expect((await limited)?.route.channel.id).toBe('a');
    // Over its limit, the scan goes on to the next route after the limiter's answer.
    expect((await new RoutePlan(dependencies, routes, 'alpha', 10).next())?.route.channel.id).toBe('b');
  });

  it('orders by the model strategy it is given, and by weight alone when routing has no strategies', async () => {
    const dependencies = setup({ strategyOf: () => 'weighted' });
    const routes = [route('a', 0), route('b', 0)];
    dependencies.health.load.started(routes[0]!.channel.id, T0);
    const byLoad = new RoutePlan(dependencies, routes, 'alpha', 10, true, 'least-in-flight');
    expect((await byLoad.next())?.route.channel.id).toBe('b');
    const unbalanced = new RoutePlan(setup(), routes, 'alpha', 10, true, 'least-in-flight');
    expect((await unbalanced.next())?.route.channel.id).toBe('a');
  });

  it('can leave per-model limits out (token counting)', async () => {
    const dependencies = setup();
    const routes = [route('a', 10, { model_limits: { alpha: { rpm: 1 } } })];
    for (let index = 0; index < 3; index += 1) {
      const candidate = await new RoutePlan(dependencies, routes, 'alpha', 10, false).next();
      expect(candidate?.route.channel.id).toBe('a');
      candidate!.ticket.succeeded();
    }
  });

  it('a skipped candidate is not an attempt and frees its probe', async () => {
    const dependencies = setup({ maxAttempts: 1 });
    const routes = [route('a', 10), route('b', 5)];
    const plan = new RoutePlan(dependencies, routes, 'alpha', 10);
    const first = await plan.next();
    plan.skip(first!);
    const second = await plan.next();
    expect(second?.route.channel.id).toBe('b');
    expect(second?.attempt).toBe(1);
  });
});

describe('RoutePlan.again', () => {
  it('retries the same channel (another key) within the attempt bound', async () => {
    const dependencies = setup({ maxAttempts: 2 });
    const routes = [route('a', 10), route('b', 5)];
    const plan = new RoutePlan(dependencies, routes, 'alpha', 10);
    const first = await plan.next();
    first!.ticket.release();
    const again = plan.again(first!);
    expect(again).toMatchObject({ attempt: 2, route: { channel: { id: 'a' } } });
    again!.ticket.succeeded();
    expect(plan.again(again!)).toBeNull();
    expect(await plan.next()).toBeNull();
  });
});
