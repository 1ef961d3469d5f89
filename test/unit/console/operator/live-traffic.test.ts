/** The overview's live figures from the in-process metrics registry: rates over the last minute, quantiles from buckets. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { bucketQuantile, LiveTraffic } from '../../../../src/console/operator/live-traffic.js';
import { GatewayMetrics, LATENCY_BUCKETS_SECONDS } from '../../../../src/metrics/gateway-metrics.js';

function call(metrics: GatewayMetrics, status: number, seconds: number, endpoint = 'chat.completions'): void {
  metrics.requests.labels('openai', endpoint, status).inc();
  metrics.requestDuration.labels('openai', endpoint).observe(seconds);
}

describe('bucketQuantile', () => {
  it('interpolates within the bucket the rank falls in', () => {
    expect(bucketQuantile([1, 2, 4], [0, 10, 0, 0], 0.5)).toBe(1.5);
    expect(bucketQuantile([1, 2, 4], [10, 0, 0, 0], 1)).toBe(1);
    expect(bucketQuantile([1, 2, 4], [0, 0, 0, 5], 0.5)).toBe(4);
    expect(bucketQuantile([1, 2, 4], [0, 0, 0, 0], 0.5)).toBeNull();
  });

  it('stays within the bounds and grows with the fraction', () => {
    fc.assert(fc.property(fc.array(fc.nat(1000), { minLength: LATENCY_BUCKETS_SECONDS.length + 1, maxLength: LATENCY_BUCKETS_SECONDS.length + 1 }), fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (counts, a, b) => {
      const low = bucketQuantile(LATENCY_BUCKETS_SECONDS, counts, Math.min(a, b));
      const high = bucketQuantile(LATENCY_BUCKETS_SECONDS, counts, Math.max(a, b));
      if (counts.every((count) => count === 0)) return low === null && high === null;
      return low !== null && high !== null && low >= 0 && high <= 120 && low <= high + 1e-9;
    }));
  });
});

describe('LiveTraffic', () => {
  it('counts model calls since the newest sample a minute old: rate, errors, latency; model lists and admin calls left out', () => {
    const metrics = new GatewayMetrics();
    call(metrics, 200, 0.2);
    const live = new LiveTraffic(metrics, 0);
    call(metrics, 200, 0.04);
    call(metrics, 200, 0.04);
    call(metrics, 200, 0.04);
    call(metrics, 502, 3);
    call(metrics, 200, 0.01, 'models');
    metrics.requests.labels('admin', 'admin', 200).inc();
    const first = live.read(10_000);
    expect(first).toMatchObject({ since: 0, seconds: 10, requests: 4, errors: 1, errorRate: 0.25, requestsPerSecond: 0.4 });
    expect(first.latencyP50Ms).toBeGreaterThan(25);
    expect(first.latencyP50Ms).toBeLessThanOrEqual(50);
    expect(first.latencyP99Ms).toBeGreaterThan(2500);

    // A minute later, the window starts at the first read's sample.
    call(metrics, 200, 0.3);
    const second = live.read(75_000);
    expect(second).toMatchObject({ since: 10_000, seconds: 65, requests: 1, errors: 0 });
    // Nothing since: zero rate, no latency.
    const third = live.read(140_000);
    expect(third).toMatchObject({ since: 75_000, requests: 0, errorRate: 0, latencyP50Ms: null });
  });
});
