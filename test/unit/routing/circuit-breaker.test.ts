/**
 * The breaker state machine on a manual clock: closed → open (consecutive failures, or a failure rate in the
 * window) → half-open after the cooldown (one probe) → closed on success, or open again with a doubled cooldown.
 */
import { describe, expect, it } from 'vitest';
import { CircuitBreaker, type BreakerPolicy } from '../../../src/routing/circuit-breaker.js';
import { ManualClock } from '../../../src/shared/clock.js';

const POLICY: BreakerPolicy = { failureThreshold: 3, failureRatePercent: 50, minimumRequests: 10, windowMs: 60_000, cooldownMs: 1000, maxCooldownMs: 8000 };
const T0 = 1_700_000_000_000;

function setup(policy: Partial<BreakerPolicy> = {}): { breaker: CircuitBreaker; clock: ManualClock } {
  return { breaker: new CircuitBreaker({ ...POLICY, ...policy }), clock: new ManualClock(T0) };
}

function fail(breaker: CircuitBreaker, clock: ManualClock, times: number): void {
  for (let index = 0; index < times; index += 1) breaker.recordFailure(clock.now(), 'server_error', false);
}

describe('CircuitBreaker', () => {
  it('stays closed below the threshold and lets every request pass', () => {
    const { breaker, clock } = setup();
    fail(breaker, clock, 2);
    expect(breaker.state).toBe('closed');
    expect(breaker.admit(clock.now())).toBe('pass');
    expect(breaker.admit(clock.now())).toBe('pass');
  });

  it('a success resets the run of failures', () => {
    const { breaker, clock } = setup();
    fail(breaker, clock, 2);
    breaker.recordSuccess(clock.now(), false);
    fail(breaker, clock, 2);
    expect(breaker.state).toBe('closed');
  });

  it('opens after the threshold and refuses until the cooldown has passed', () => {
    const { breaker, clock } = setup();
    fail(breaker, clock, 3);
    expect(breaker.state).toBe('open');
    expect(breaker.openUntil).toBe(T0 + 1000);
    expect(breaker.admit(clock.now())).toBeNull();
    expect(breaker.isAvailable(clock.now())).toBe(false);
    clock.advance(999);
    expect(breaker.admit(clock.now())).toBeNull();
    clock.advance(1);
    expect(breaker.isAvailable(clock.now())).toBe(true);
    expect(breaker.snapshot(clock.now()).state).toBe('half-open');
  });

  it('lets exactly one probe through when half-open, and closes when it succeeds', () => {
    const { breaker, clock } = setup();
    fail(breaker, clock, 3);
    clock.advance(1000);
    expect(breaker.admit(clock.now())).toBe('probe');
    expect(breaker.state).toBe('half-open');
    expect(breaker.admit(clock.now())).toBeNull();
    expect(breaker.isAvailable(clock.now())).toBe(false);
    breaker.recordSuccess(clock.now(), true);
    expect(breaker.state).toBe('closed');
    expect(breaker.admit(clock.now())).toBe('pass');
    expect(breaker.snapshot(clock.now())).toMatchObject({ state: 'closed', level: 0, consecutiveFailures: 0, openReason: null });
  });

  it('re-opens with a doubled cooldown when the probe fails, capped at the maximum', () => {
    const { breaker, clock } = setup();
    fail(breaker, clock, 3);
    const cooldowns: number[] = [];
    for (let round = 0; round < 5; round += 1) {
      clock.set(breaker.openUntil);
      expect(breaker.admit(clock.now())).toBe('probe');
      breaker.recordFailure(clock.now(), 'server_error', true);
      cooldowns.push(breaker.openUntil - clock.now());
    }
    expect(cooldowns).toEqual([2000, 4000, 8000, 8000, 8000]);
    clock.set(breaker.openUntil);
    expect(breaker.admit(clock.now())).toBe('probe');
    breaker.recordSuccess(clock.now(), true);
    fail(breaker, clock, 3);
    expect(breaker.openUntil - clock.now()).toBe(1000);
  });

  it('a probe that ends without a verdict frees the slot for the next request', () => {
    const { breaker, clock } = setup();
    fail(breaker, clock, 3);
    clock.advance(1000);
    expect(breaker.admit(clock.now())).toBe('probe');
    breaker.releaseProbe();
    expect(breaker.state).toBe('half-open');
    expect(breaker.admit(clock.now())).toBe('probe');
  });

  it('a late success of a request admitted before the breaker opened does not close it', () => {
    const { breaker, clock } = setup();
    fail(breaker, clock, 3);
    breaker.recordSuccess(clock.now(), false);
    expect(breaker.state).toBe('open');
    breaker.recordSuccess(clock.now(), true);
    expect(breaker.state).toBe('closed');
  });

  it('opens on the failure rate over the window even without a long run of failures', () => {
    const { breaker, clock } = setup({ failureThreshold: 100 });
    for (let index = 0; index < 9; index += 1) {
      if (index % 2 === 0) breaker.recordFailure(clock.now(), 'server_error', false);
      else breaker.recordSuccess(clock.now(), false);
      clock.advance(100);
    }
    expect(breaker.state).toBe('closed');
    breaker.recordSuccess(clock.now(), false);
    breaker.recordFailure(clock.now(), 'server_error', false);
    expect(breaker.state).toBe('open');
  });

  it('forgets outcomes that left the window', () => {
    const { breaker, clock } = setup({ failureThreshold: 100 });
    for (let index = 0; index < 9; index += 1) breaker.recordFailure(clock.now(), 'server_error', false);
    clock.advance(61_000);
    for (let index = 0; index < 9; index += 1) breaker.recordSuccess(clock.now(), false);
    breaker.recordFailure(clock.now(), 'server_error', false);
    expect(breaker.state).toBe('closed');
    expect(breaker.snapshot(clock.now()).recent).toEqual({ successes: 9, failures: 1 });
  });

  it('opens for exactly the Retry-After on a throttled answer, without raising the cooldown level', () => {
    const { breaker, clock } = setup();
    breaker.recordFailure(clock.now(), 'throttled', false, 2500);
    expect(breaker.snapshot(clock.now())).toMatchObject({ state: 'open', openReason: 'retry-after', level: 0, lastFailureClass: 'throttled' });
    expect(breaker.openUntil).toBe(T0 + 2500);
    clock.advance(2500);
    expect(breaker.admit(clock.now())).toBe('probe');
    breaker.recordSuccess(clock.now(), true);
    expect(breaker.state).toBe('closed');
  });

  it('a shorter Retry-After does not shorten a longer open period', () => {
    const { breaker, clock } = setup();
    breaker.recordFailure(clock.now(), 'throttled', false, 5000);
    breaker.recordFailure(clock.now(), 'throttled', false, 1000);
    expect(breaker.openUntil).toBe(T0 + 5000);
  });

  it('adopts a state decided elsewhere', () => {
    const { breaker, clock } = setup();
    breaker.adopt('open', T0 + 4000, 2, 'failures');
    expect(breaker.snapshot(clock.now())).toMatchObject({ state: 'open', level: 2, openUntil: T0 + 4000 });
    expect(breaker.admit(clock.now())).toBeNull();
    breaker.adopt('closed', 0, 0, null);
    expect(breaker.admit(clock.now())).toBe('pass');
  });

  it('reports the last failure and success', () => {
    const { breaker, clock } = setup();
    breaker.recordSuccess(clock.now(), false);
    clock.advance(10);
    breaker.recordFailure(clock.now(), 'first_byte_timeout', false);
    expect(breaker.snapshot(clock.now())).toMatchObject({ lastSuccessAt: T0, lastFailureAt: T0 + 10, lastFailureClass: 'first_byte_timeout', consecutiveFailures: 1 });
  });
});
