import { describe, expect, it } from 'vitest';
import { admissionBetween, parseAdmission } from '../../../bench/admission-reading.js';
import { GatewayMetrics } from '../../../src/metrics/gateway-metrics.js';

describe('the gateway-side reading of an overload run', () => {
  it('reads admitted and refused answers, their p99 bucket and the 2xx goodput from the gateway\'s own /metrics', () => {
    const metrics = new GatewayMetrics();
    try {
      const before = parseAdmission(metrics.registry.render());
      for (let i = 0; i < 98; i += 1) metrics.admissionLatency.labels('admitted').observe(0.004);
      metrics.admissionLatency.labels('admitted').observe(0.03);
      metrics.admissionLatency.labels('admitted').observe(0.03);
      for (let i = 0; i < 50; i += 1) metrics.admissionLatency.labels('refused').observe(0.0008);
      metrics.requests.labels('openai', 'chat.completions', 200).inc(90);
      metrics.requests.labels('openai', 'chat.completions', 400).inc(10);
      metrics.requests.labels('openai', 'chat.completions', 503).inc(50);
      // the reading's own GET /metrics, answered after it was rendered: not goodput
      metrics.requests.labels('admin', 'metrics', 200).inc(1);
      const after = parseAdmission(metrics.registry.render());
      expect(admissionBetween(before, after, 10)).toEqual({
        admitted: 100,
        // the 99th of 100 answers is one of the two at 30 ms: in the ≤ 50 ms bucket
        admittedP99Ms: 50,
        refused: 50,
        refusedP99Ms: 1,
        goodputPerSec: 9,
      });
    } finally {
      metrics.stop();
    }
  });

  it('counts only what happened between the two readings', () => {
    const metrics = new GatewayMetrics();
    try {
      metrics.admissionLatency.labels('refused').observe(2);
      metrics.requests.labels('openai', 'chat.completions', 200).inc(5);
      const before = parseAdmission(metrics.registry.render());
      metrics.admissionLatency.labels('admitted').observe(0.002);
      const after = parseAdmission(metrics.registry.render());
      expect(admissionBetween(before, after, 1)).toEqual({ admitted: 1, admittedP99Ms: 2.5, refused: 0, refusedP99Ms: null, goodputPerSec: 0 });
    } finally {
      metrics.stop();
    }
  });
});
