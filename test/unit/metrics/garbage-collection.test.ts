import { constants } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { gcKindLabel, observeGarbageCollection } from '../../../src/metrics/garbage-collection.js';
import { GatewayMetrics } from '../../../src/metrics/gateway-metrics.js';
import { MetricsRegistry } from '../../../src/metrics/metrics-registry.js';

/** Short-lived objects, far more than the young generation holds: V8 has to scavenge several times. */
function churn(megabytes: number): number {
  let kept = 0;
  for (let index = 0; index < megabytes * 16_384; index += 1) {
    const garbage = { index, text: `item ${index}`, list: [index, index + 1] };
    kept += garbage.list.length;
  }
  return kept;
}

function countOf(text: string, kind: string): number {
  return Number(new RegExp(`^unigate_gc_pause_seconds_count\\{kind="${kind}"\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
}

describe('garbage-collection pauses', () => {
  it('names each kind of collection Node reports', () => {
    expect(gcKindLabel({ detail: { kind: constants.NODE_PERFORMANCE_GC_MINOR } })).toBe('minor');
    expect(gcKindLabel({ detail: { kind: constants.NODE_PERFORMANCE_GC_MAJOR } })).toBe('major');
    expect(gcKindLabel({ detail: { kind: constants.NODE_PERFORMANCE_GC_INCREMENTAL } })).toBe('incremental');
    expect(gcKindLabel({ detail: { kind: constants.NODE_PERFORMANCE_GC_WEAKCB } })).toBe('weak_callbacks');
    expect(gcKindLabel({ detail: { kind: 1024 } })).toBe('other');
    expect(gcKindLabel({ detail: null })).toBe('other');
  });

  it('records the scavenges that allocation causes, with their pause time', async () => {
    const registry = new MetricsRegistry();
    const stop = observeGarbageCollection(registry);
    try {
      expect(churn(200)).toBeGreaterThan(0);
      // Entries reach observers asynchronously.
      const deadline = performance.now() + 2000;
      while (countOf(registry.render(), 'minor') === 0 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      const text = registry.render();
      expect(countOf(text, 'minor')).toBeGreaterThan(0);
      const sum = Number(/^unigate_gc_pause_seconds_sum\{kind="minor"\} (\S+)$/m.exec(text)?.[1]);
      expect(sum).toBeGreaterThan(0);
      expect(sum).toBeLessThan(5);
    } finally {
      stop();
    }
    // Stopped: further collections are not recorded.
    const before = countOf(registry.render(), 'minor');
    churn(200);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(countOf(registry.render(), 'minor')).toBe(before);
  });

  it('is part of the gateway metrics', () => {
    const metrics = new GatewayMetrics();
    try {
      expect(metrics.render()).toContain('# TYPE unigate_gc_pause_seconds histogram');
    } finally {
      metrics.stop();
    }
  });
});
