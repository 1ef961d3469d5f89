import type { MetricAttributes } from './otel-pipeline.js';

/** One attribute set's running figures (cumulative since the start). */
export interface HistogramPoint {
  attributes: MetricAttributes;
  count: number;
  sum: number;
  min: number;
  max: number;
  /** One more than `bounds`: the last counts values above the highest bound. */
  bucketCounts: number[];
}

/** Attribute sets kept per histogram at most; further ones are folded into one overflow set. */
const MAX_SERIES = 2000;
const OVERFLOW: MetricAttributes = Object.freeze({ 'otel.metric.overflow': 'true' });

/** An explicit-bucket histogram with cumulative temporality, keyed by attribute set. */
export class Histogram {
  readonly points = new Map<string, HistogramPoint>();

  constructor(
    readonly name: string,
    readonly unit: string,
    readonly description: string,
    readonly bounds: readonly number[],
  ) {}

  record(value: number, attributes: MetricAttributes): void {
    if (!Number.isFinite(value) || value < 0) return;
    const key = seriesKey(attributes);
    let point = this.points.get(key);
    if (point === undefined) {
      const overflow = this.points.size >= MAX_SERIES;
      const target = overflow ? seriesKey(OVERFLOW) : key;
      point = this.points.get(target);
      if (point === undefined) {
        point = { attributes: overflow ? OVERFLOW : { ...attributes }, count: 0, sum: 0, min: value, max: value, bucketCounts: new Array<number>(this.bounds.length + 1).fill(0) };
        this.points.set(target, point);
      }
    }
    point.count += 1;
    point.sum += value;
    if (value < point.min) point.min = value;
    if (value > point.max) point.max = value;
    const bucket = bucketOf(this.bounds, value);
    point.bucketCounts[bucket] = (point.bucketCounts[bucket] as number) + 1;
  }
}

/** The bucket of a value: the first bound it does not exceed (buckets are upper-inclusive), else the last. */
export function bucketOf(bounds: readonly number[], value: number): number {
  let low = 0;
  let high = bounds.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (value <= (bounds[middle] as number)) high = middle;
    else low = middle + 1;
  }
  return low;
}

function seriesKey(attributes: MetricAttributes): string {
  let key = '';
  for (const name of Object.keys(attributes).sort()) key += `${name}\u0000${attributes[name]}\u0001`;
  return key;
}
