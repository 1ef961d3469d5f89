import { monitorEventLoopDelay } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { EVENT_LOOP_DELAY_BUCKETS_SECONDS, foldDelays, observeEventLoopDelay } from '../../../src/metrics/event-loop-delay.js';
import { GatewayMetrics } from '../../../src/metrics/gateway-metrics.js';
import { HistogramSeries, MetricsRegistry } from '../../../src/metrics/metrics-registry.js';

/** A libuv histogram as `monitorEventLoopDelay` fills it: percentile → nanoseconds. */
function monitorOf(count: number, percentiles: Array<[number, number]>) {
  let reset = false;
  return {
    monitor: { count, max: Math.max(0, ...percentiles.map(([, nanoseconds]) => nanoseconds)), percentiles: new Map(percentiles), reset: () => { reset = true; } },
    wasReset: () => reset,
  };
}

describe('event-loop delay', () => {
  it('moves every sample of the libuv histogram into the exported buckets at its percentile value, then empties it', () => {
    const series = new HistogramSeries(EVENT_LOOP_DELAY_BUCKETS_SECONDS);
    // 1,000 intervals of a 10 ms timer: half ran 0.5 ms late, up to 99 % 3 ms late, the last 10 40 ms late.
    const { monitor, wasReset } = monitorOf(1000, [[100, 50e6], [0, 10.2e6], [50, 10.5e6], [99, 13e6]]);
    expect(foldDelays(monitor, series, 10)).toBeCloseTo(0.04);
    expect(series.count).toBe(1000);
    // ≤ 1 ms: 500; ≤ 2.5 ms: still 500; ≤ 5 ms: 990; ≤ 50 ms: all.
    expect(series.counts.slice(0, 7)).toEqual([500, 0, 490, 0, 0, 10, 0]);
    expect(series.sum).toBeCloseTo(500 * 0.0005 + 490 * 0.003 + 10 * 0.04);
    expect(wasReset()).toBe(true);
  });

  it('records nothing when no sample was taken', () => {
    const series = new HistogramSeries(EVENT_LOOP_DELAY_BUCKETS_SECONDS);
    const { monitor } = monitorOf(0, []);
    expect(foldDelays(monitor, series, 10)).toBe(0);
    expect(series.count).toBe(0);
  });

  it('shows a synchronous stall of the loop in /metrics', async () => {
    const registry = new MetricsRegistry();
    const stop = observeEventLoopDelay(registry);
    // The same-run baseline: libuv's own intervals of a 10 ms timer over the same moments, period included.
    const raw = monitorEventLoopDelay({ resolution: 10 });
    raw.enable();
    try {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const until = performance.now() + 120;
      while (performance.now() < until) { /* the stall */ }
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const text = registry.render();
      const count = Number(/^unigate_event_loop_delay_seconds_count (\S+)$/m.exec(text)?.[1]);
      const upTo50ms = Number(/^unigate_event_loop_delay_seconds_bucket\{le="0.05"\} (\S+)$/m.exec(text)?.[1]);
      expect(count).toBeGreaterThan(upTo50ms);
      expect(Number(/^unigate_event_loop_delay_max_seconds (\S+)$/m.exec(text)?.[1])).toBeGreaterThan(0.1);
      // The timer's own 10 ms period is not delay: the intervals of at most 15 ms (run at most 5 ms late) sit in the
      // buckets up to 5 ms. Counting the period would leave those buckets empty. On a quiet machine nearly every
      // interval is that short; a loaded one runs fewer timers on time, in the baseline as in the metric.
      raw.disable();
      const onTime = Math.max(0, ...[...raw.percentiles].filter(([, nanoseconds]) => nanoseconds <= 15e6).map(([percentile]) => percentile / 100));
      const upTo5ms = Number(/^unigate_event_loop_delay_seconds_bucket\{le="0.005"\} (\S+)$/m.exec(text)?.[1]);
      expect(upTo5ms / count, `share of the raw intervals up to 15 ms: ${onTime}`).toBeGreaterThanOrEqual(onTime / 2);
    } finally {
      raw.disable();
      stop();
    }
  });

  it('is part of the gateway metrics, with the SQLite write transactions', () => {
    const metrics = new GatewayMetrics();
    try {
      metrics.observeSqliteWrite('usage', 0.002, 120);
      const text = metrics.render();
      expect(text).toContain('# TYPE unigate_event_loop_delay_seconds histogram');
      expect(text).toContain('# TYPE unigate_event_loop_delay_max_seconds gauge');
      expect(text).toContain('unigate_sqlite_write_seconds_bucket{writer="usage",le="0.0025"} 1');
      expect(text).toContain('unigate_sqlite_write_rows_total{writer="usage"} 120');
    } finally {
      metrics.stop();
    }
  });
});
