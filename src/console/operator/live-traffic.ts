import type { GatewayMetrics } from '../../metrics/gateway-metrics.js';
import type { LabelValue } from '../../metrics/metrics-registry.js';

/** Protocol families whose endpoints are model calls (the public, admin and unknown paths are left out). */
const MODEL_PROTOCOLS = new Set<LabelValue>(['openai', 'anthropic', 'gemini']);
/** Model lists are not model calls either. */
const NOT_CALLS = new Set<LabelValue>(['models']);
/** The live figures compare with the newest sample at least this old. */
const WINDOW_MS = 60_000;
/** A new sample is kept at most this often, so frequent reads keep few of them. */
const SAMPLE_EVERY_MS = 5_000;

interface Sample {
  at: number;
  requests: number;
  errors: number;
  /** Per-bucket (not cumulative) counts of request durations; the last is +Inf. */
  buckets: number[];
}

export interface LiveSummary {
  since: number;
  seconds: number;
  requests: number;
  requestsPerSecond: number;
  errors: number;
  errorRate: number;
  latencyP50Ms: number | null;
  latencyP99Ms: number | null;
  inFlight: number;
}

const isCall = (values: readonly LabelValue[]): boolean => MODEL_PROTOCOLS.has(values[0] as LabelValue) && !NOT_CALLS.has(values[1] as LabelValue);

/**
 * The quantile of a histogram's bucket counts, interpolated linearly within its bucket as Prometheus'
 * histogram_quantile does; values above the last bound are reported as that bound.
 */
export function bucketQuantile(bounds: readonly number[], counts: readonly number[], fraction: number): number | null {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = fraction * total;
  let seen = 0;
  for (let index = 0; index < counts.length; index += 1) {
    const count = counts[index] as number;
    if (count > 0 && seen + count >= rank) {
      if (index >= bounds.length) return bounds[bounds.length - 1] ?? null;
      const lower = index === 0 ? 0 : (bounds[index - 1] as number);
      const upper = bounds[index] as number;
      return lower + (upper - lower) * ((rank - seen) / count);
    }
    seen += count;
  }
  return bounds[bounds.length - 1] ?? null;
}

/**
 * Requests per second, error rate and latency of this process's model calls, from the in-process metrics registry
 * (`unigate_requests_total`, `unigate_request_duration_seconds`): the difference between now and the newest sample
 * taken at least a minute earlier, or the oldest one kept (the first is from when the console's routes were made).
 * Samples are taken when the figures are read, so no timer runs.
 */
export class LiveTraffic {
  readonly #samples: Sample[];

  constructor(private readonly metrics: GatewayMetrics, now: number) {
    this.#samples = [this.#sample(now)];
  }

  read(now: number): LiveSummary {
    const current = this.#sample(now);
    const base = [...this.#samples].reverse().find((sample) => now - sample.at >= WINDOW_MS) ?? (this.#samples[0] as Sample);
    // Samples older than the base can never be a later read's base.
    while ((this.#samples[0] as Sample).at < base.at) this.#samples.shift();
    if (now - (this.#samples[this.#samples.length - 1] as Sample).at >= SAMPLE_EVERY_MS) this.#samples.push(current);
    const seconds = Math.max(0.001, (now - base.at) / 1000);
    const requests = current.requests - base.requests;
    const errors = current.errors - base.errors;
    const counts = current.buckets.map((count, index) => count - (base.buckets[index] ?? 0));
    const bounds = this.metrics.requestDuration.bucketBounds();
    const quantileMs = (fraction: number): number | null => {
      const value = bucketQuantile(bounds, counts, fraction);
      return value === null ? null : Math.round(value * 1000);
    };
    return {
      since: base.at, seconds, requests, requestsPerSecond: requests / seconds, errors, errorRate: requests === 0 ? 0 : errors / requests,
      latencyP50Ms: quantileMs(0.5), latencyP99Ms: quantileMs(0.99), inFlight: this.metrics.inFlight.value,
    };
  }

  #sample(at: number): Sample {
    let requests = 0;
    let errors = 0;
    for (const { values, series } of this.metrics.requests.entries()) {
      if (!isCall(values)) continue;
      requests += series.value;
      if (Number(values[2]) >= 400) errors += series.value;
    }
    const buckets = new Array<number>(this.metrics.requestDuration.bucketBounds().length + 1).fill(0);
    for (const { values, series } of this.metrics.requestDuration.entries()) {
      if (!isCall(values)) continue;
      series.counts.forEach((count, index) => {
        buckets[index] = (buckets[index] as number) + count;
      });
    }
    return { at, requests, errors, buckets };
  }
}
