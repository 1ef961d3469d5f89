/**
 * Channel health: a breaker per channel (reachability, keys) and per channel-model (answers), fed through attempt
 * tickets; caller errors and aborts have no verdict; forced attempts when everything is open; sharing hooks.
 */
import { describe, expect, it } from 'vitest';
import { ChannelHealth, type BreakerChange } from '../../../src/routing/channel-health.js';
import type { BreakerPolicy } from '../../../src/routing/circuit-breaker.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { silentLogger } from '../../../src/shared/logger.js';
import type { Channel } from '../../../src/domain/records.js';
import { channel, T0 } from './routing-fixtures.js';

const POLICY: BreakerPolicy = { failureThreshold: 2, failureRatePercent: 100, minimumRequests: 1000, windowMs: 60_000, cooldownMs: 1000, maxCooldownMs: 60_000 };
function setup(): { health: ChannelHealth; clock: ManualClock; changes: BreakerChange[] } {
  const clock = new ManualClock(T0);
  const health = new ChannelHealth(POLICY, clock, silentLogger);
  const changes: BreakerChange[] = [];
  health.onChange((change) => changes.push(change));
  return { health, clock, changes };
}

function failTimes(health: ChannelHealth, target: Channel, model: string, failureClass: 'connect' | 'server_error', times: number): void {
  for (let index = 0; index < times; index += 1) health.acquire(target, model)?.failed({ failureClass, retryAfterMs: null });
}

describe('ChannelHealth', () => {
  it('answer failures open only the channel-model: the channel\'s other models keep their traffic', () => {
    const { health, changes } = setup();
    const one = channel('one');
    failTimes(health, one, 'alpha', 'server_error', 2);
    expect(health.acquire(one, 'alpha')).toBeNull();
    expect(health.isAvailable(one, 'alpha')).toBe(false);
    expect(health.acquire(one, 'beta')).not.toBeNull();
    expect(health.status(one)).toBe('degraded');
    expect(changes).toEqual([expect.objectContaining({ channelId: 'one', model: 'alpha', state: 'open', reason: 'failures' })]);
  });

  it('unreachable-host failures open the channel breaker: every model of the channel is skipped', () => {
    const { health } = setup();
    const one = channel('one');
    health.acquire(one, 'alpha')?.failed({ failureClass: 'connect', retryAfterMs: null });
    health.acquire(one, 'beta')?.failed({ failureClass: 'reset', retryAfterMs: null });
    expect(health.acquire(one, 'alpha')).toBeNull();
    expect(health.acquire(one, 'beta')).toBeNull();
    expect(health.status(one)).toBe('down');
  });

  it('an answer from the host, even a failed one, ends a run of connection failures', () => {
    const { health } = setup();
    const one = channel('one');
    health.acquire(one, 'alpha')?.failed({ failureClass: 'connect', retryAfterMs: null });
    health.acquire(one, 'alpha')?.failed({ failureClass: 'server_error', retryAfterMs: null });
    health.acquire(one, 'alpha')?.failed({ failureClass: 'connect', retryAfterMs: null });
    expect(health.acquire(one, 'beta')).not.toBeNull();
  });

  it('half-open: one probe per breaker; its success closes and announces it; recovered channels get traffic again', () => {
    const { health, clock, changes } = setup();
    const one = channel('one');
    failTimes(health, one, 'alpha', 'server_error', 2);
    clock.advance(1000);
    const probe = health.acquire(one, 'alpha');
    expect(probe).not.toBeNull();
    expect(health.acquire(one, 'alpha')).toBeNull();
    probe?.succeeded();
    expect(health.acquire(one, 'alpha')).not.toBeNull();
    expect(health.status(one)).toBe('operational');
    expect(changes.map((change) => change.state)).toEqual(['open', 'closed']);
  });

  it('a ticket takes one verdict: later calls are ignored, and release frees an unused probe', () => {
    const { health, clock } = setup();
    const one = channel('one');
    const ticket = health.acquire(one, 'alpha');
    ticket?.succeeded();
    ticket?.failed({ failureClass: 'server_error', retryAfterMs: null });
    ticket?.failed({ failureClass: 'server_error', retryAfterMs: null });
    ticket?.release();
    expect(health.report(one).models.find((entry) => entry.model === 'alpha')).toMatchObject({ consecutiveFailures: 0, recent: { successes: 1, failures: 0 } });
    failTimes(health, one, 'alpha', 'server_error', 2);
    clock.advance(1000);
    health.acquire(one, 'alpha')?.release();
    expect(health.acquire(one, 'alpha')).not.toBeNull();
  });

  it('a success admitted by a plain pass only counts: it neither closes a breaker that opened meanwhile nor announces anything', () => {
    const { health, clock, changes } = setup();
    const one = channel('one');
    // Admitted while both breakers were closed; both open before its answer arrives.
    const early = health.acquire(one, 'alpha');
    failTimes(health, one, 'alpha', 'server_error', 2);
    health.acquire(one, 'beta')?.failed({ failureClass: 'connect', retryAfterMs: null });
    health.acquire(one, 'beta')?.failed({ failureClass: 'connect', retryAfterMs: null });
    const opened = changes.length;
    const before = health.report(one);
    early?.succeeded();
    expect(changes).toHaveLength(opened);
    const after = health.report(one);
    expect(after.channel).toMatchObject({ state: 'open', openUntil: before.channel.openUntil, consecutiveFailures: 0, recent: { successes: 1 } });
    expect(after.models.find((entry) => entry.model === 'alpha')).toMatchObject({ state: 'open', openUntil: before.models.find((entry) => entry.model === 'alpha')?.openUntil, consecutiveFailures: 0, recent: { successes: 1, failures: 2 } });
    expect(health.acquire(one, 'alpha')).toBeNull();
    // The cooldown runs as before: the probe after it still decides, and its success is announced.
    clock.advance(60_000);
    health.acquire(one, 'alpha')?.succeeded();
    expect(changes.slice(opened).map((change) => [change.model, change.state])).toEqual([[null, 'closed'], ['alpha', 'closed']]);
  });

  it('force admits through open breakers; a forced success closes them', () => {
    const { health } = setup();
    const one = channel('one');
    failTimes(health, one, 'alpha', 'server_error', 2);
    const forced = health.force(one, 'alpha');
    expect(forced.forced).toBe(true);
    forced.succeeded();
    expect(health.acquire(one, 'alpha')).not.toBeNull();
  });

  it('a forced failure leaves the cooldown as it was', () => {
    const { health } = setup();
    const one = channel('one');
    failTimes(health, one, 'alpha', 'server_error', 2);
    const before = health.report(one).models[0]?.openUntil;
    health.force(one, 'alpha').failed({ failureClass: 'server_error', retryAfterMs: null });
    expect(health.report(one).models[0]?.openUntil).toBe(before);
  });

  it('a throttled answer with Retry-After opens the channel-model for that long', () => {
    const { health, clock } = setup();
    const one = channel('one');
    health.acquire(one, 'alpha')?.failed({ failureClass: 'throttled', retryAfterMs: 3000 });
    expect(health.acquire(one, 'alpha')).toBeNull();
    clock.advance(2999);
    expect(health.acquire(one, 'alpha')).toBeNull();
    clock.advance(1);
    expect(health.acquire(one, 'alpha')).not.toBeNull();
  });

  it('remembers when each channel-model last failed', () => {
    const { health, clock } = setup();
    const one = channel('one');
    expect(health.lastFailureAt(one, 'alpha')).toBe(0);
    clock.advance(5);
    health.acquire(one, 'alpha')?.failed({ failureClass: 'server_error', retryAfterMs: null });
    expect(health.lastFailureAt(one, 'alpha')).toBe(T0 + 5);
  });

  it('adopts states from other instances without announcing them again', () => {
    const { health, changes } = setup();
    const one = channel('one');
    health.adopt({ channelId: 'one', model: 'alpha', state: 'open', openUntil: T0 + 5000, level: 1, reason: 'failures' });
    expect(health.acquire(one, 'alpha')).toBeNull();
    health.adopt({ channelId: 'one', model: null, state: 'open', openUntil: T0 + 5000, level: 0, reason: 'failures' });
    expect(health.acquire(one, 'beta')).toBeNull();
    health.adopt({ channelId: 'one', model: null, state: 'closed', openUntil: 0, level: 0, reason: null });
    health.adopt({ channelId: 'one', model: 'alpha', state: 'closed', openUntil: 0, level: 0, reason: null });
    expect(health.acquire(one, 'alpha')).not.toBeNull();
    expect(changes).toEqual([]);
  });

  it('follows the routing snapshot: a changed channel starts fresh, a deleted one is forgotten', () => {
    const { health, changes } = setup();
    const one = channel('one');
    const two = channel('two');
    failTimes(health, one, 'alpha', 'server_error', 2);
    failTimes(health, two, 'alpha', 'server_error', 2);
    health.syncChannels([one, two]);
    expect(health.acquire(one, 'alpha')).toBeNull();
    health.syncChannels([{ ...one, updatedAt: T0 + 1 }]);
    expect(health.acquire({ ...one, updatedAt: T0 + 1 }, 'alpha')).not.toBeNull();
    expect(changes.filter((change) => change.state === 'closed').map((change) => change.channelId)).toEqual(['one']);
    expect([...health.states()].map((state) => state.channel)).not.toContain('name-two');
  });

  it('lists every breaker for the gauge', () => {
    const { health } = setup();
    const one = channel('one');
    failTimes(health, one, 'alpha', 'server_error', 2);
    health.acquire(one, 'beta')?.succeeded();
    expect([...health.states()]).toEqual([
      { channel: 'name-one', model: '', state: 'closed' },
      { channel: 'name-one', model: 'alpha', state: 'open' },
      { channel: 'name-one', model: 'beta', state: 'closed' },
    ]);
  });
});
