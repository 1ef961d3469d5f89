import { describe, expect, it } from 'vitest';
import { loopHoldsBetween, p99BetweenMs, parseLoopHolds } from '../../../bench/loop-holds.js';
import { MetricsRegistry } from '../../../src/metrics/metrics-registry.js';
import { EVENT_LOOP_DELAY_BUCKETS_SECONDS } from '../../../src/metrics/event-loop-delay.js';
import { SQLITE_WRITE_BUCKETS_SECONDS } from '../../../src/metrics/gateway-metrics.js';
import { GC_PAUSE_BUCKETS_SECONDS } from '../../../src/metrics/garbage-collection.js';

/** A registry with the gateway's real metric names and buckets, so the parser reads what /metrics really prints. */
function gatewayLike() {
  const registry = new MetricsRegistry();
  const delay = registry.histogram('unigate_event_loop_delay_seconds', 'delay', [], EVENT_LOOP_DELAY_BUCKETS_SECONDS).labels();
  const writes = registry.histogram('unigate_sqlite_write_seconds', 'writes', ['writer'], SQLITE_WRITE_BUCKETS_SECONDS);
  const gc = registry.histogram('unigate_gc_pause_seconds', 'gc', ['kind'], GC_PAUSE_BUCKETS_SECONDS);
  let max = 0;
  registry.collected('unigate_event_loop_delay_max_seconds', 'max', [], function* () {
    yield { labels: [], value: max };
  });
  return { registry, delay, writes, gc, setMax: (seconds: number) => (max = seconds) };
}

describe('loop holds read from /metrics', () => {
  it('takes the figures of a scenario as the difference of two readings', () => {
    const gateway = gatewayLike();
    // Before the scenario: slow writes that must not count towards it.
    for (let i = 0; i < 50; i++) gateway.writes.labels('money').observe(0.2);
    gateway.delay.observe(0.9, 10);
    gateway.gc.labels('minor').observe(0.05, 7);
    const before = parseLoopHolds(gateway.registry.render());

    gateway.delay.observe(0.0005, 990);
    gateway.delay.observe(0.02, 10);
    for (let i = 0; i < 99; i++) gateway.writes.labels('money').observe(0.0008);
    gateway.writes.labels('money').observe(0.004);
    for (let i = 0; i < 20; i++) gateway.writes.labels('usage').observe(0.0003);
    gateway.setMax(0.0213);
    gateway.gc.labels('minor').observe(0.002, 30);
    gateway.gc.labels('major').observe(0.006, 2);
    const after = parseLoopHolds(gateway.registry.render());

    const holds = loopHoldsBetween(before, { ...after, readAtMs: before.readAtMs + 4000 });
    // 1,000 samples: the 990th is within 1 ms (the first bucket), the slow ones before the scenario are not counted.
    expect(holds.delayP99Ms).toBe(1);
    expect(holds.delayMaxMs).toBeCloseTo(21.3, 5);
    expect(holds.writes).toEqual([
      { writer: 'money', count: 100, meanMs: expect.closeTo((99 * 0.8 + 4) / 100, 6), p99Ms: 1 },
      { writer: 'usage', count: 20, meanMs: expect.closeTo(0.3, 6), p99Ms: 0.5 },
    ]);
    // 990 samples of 0.5 ms and 10 of 20 ms; the 0.9 s samples before the scenario are not counted.
    expect(holds.delayMeanMs).toBeCloseTo((990 * 0.5 + 10 * 20) / 1000, 6);
    // Collections of the scenario only: 30 scavenges of 2 ms and 2 full collections of 6 ms.
    expect(holds.gc?.pauses).toEqual({ minor: 30, major: 2 });
    expect(holds.gc?.totalMs).toBeCloseTo(30 * 2 + 2 * 6, 6);
    expect(holds.gc?.msPerSecond).toBeCloseTo((30 * 2 + 2 * 6) / 4, 6);
  });

  it('has no percentile without observations, and says so past the last bucket', () => {
    const reading = { buckets: [{ le: 0.001, count: 0 }, { le: Infinity, count: 3 }], count: 3, sum: 0.5 };
    expect(p99BetweenMs(reading, reading)).toBeNull();
    expect(p99BetweenMs(null, reading)).toBe(Infinity);
    expect(parseLoopHolds('# nothing here\n').delay).toBeNull();
    const nothing = parseLoopHolds('# nothing here\n');
    expect(loopHoldsBetween(nothing, nothing).gc).toBeNull();
  });
});
