import { monitorEventLoopDelay, type ELDHistogram } from 'node:perf_hooks';
import type { Histogram, HistogramSeries, MetricsRegistry } from './metrics-registry.js';

/** Seconds, 1 ms to 2.5 s: a healthy loop sits in the first buckets, a long synchronous stall in the last. */
export const EVENT_LOOP_DELAY_BUCKETS_SECONDS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5] as const;

/** The libuv timer behind the samples fires this often (ms): one sample each time. */
const SAMPLE_RESOLUTION_MS = 10;
/** Samples move from the libuv histogram into the exported one this often (ms). */
const FOLD_MS = 1000;
/** `unigate_event_loop_delay_max_seconds` is the longest delay of this many last folds. */
const MAX_WINDOW_FOLDS = 10;

/**
 * Moves the samples of `monitor` into `series` (each sample at its HDR percentile value) and empties the monitor.
 * libuv records the whole interval between two runs of the timer, so the timer's own period (`resolutionMs`) is taken
 * off each sample: what remains is how late it ran. Returns the longest delay seen, in seconds (0 without samples).
 */
export function foldDelays(monitor: Pick<ELDHistogram, 'count' | 'max' | 'percentiles' | 'reset'>, series: HistogramSeries, resolutionMs: number): number {
  const total = monitor.count;
  if (total === 0) return 0;
  const lateSeconds = (nanoseconds: number): number => Math.max(0, nanoseconds / 1e6 - resolutionMs) / 1000;
  let placed = 0;
  for (const [percentile, nanoseconds] of [...monitor.percentiles].sort(([left], [right]) => left - right)) {
    const upTo = Math.round((total * percentile) / 100);
    if (upTo > placed) {
      series.observe(lateSeconds(nanoseconds), upTo - placed);
      placed = upTo;
    }
  }
  if (placed < total) series.observe(lateSeconds(monitor.max), total - placed);
  const max = lateSeconds(monitor.max);
  monitor.reset();
  return max;
}

/**
 * `unigate_event_loop_delay_seconds`: how late the event loop ran a timer due every 10 ms (the wait any ready
 * request met), sampled in libuv by `perf_hooks.monitorEventLoopDelay`; `unigate_event_loop_delay_max_seconds`:
 * the longest such delay in the last 10 seconds. Returns the stop function.
 */
export function observeEventLoopDelay(registry: MetricsRegistry): () => void {
  const histogram: Histogram = registry.histogram(
    'unigate_event_loop_delay_seconds',
    'How late the event loop ran a timer due every 10 ms: the wait a ready request met (synchronous work, garbage collection).',
    [],
    EVENT_LOOP_DELAY_BUCKETS_SECONDS,
  );
  const series = histogram.labels();
  const recentMax: number[] = [];
  registry.collected('unigate_event_loop_delay_max_seconds', 'The longest event-loop delay of the last 10 seconds.', [], function* () {
    yield { labels: [], value: Math.max(0, ...recentMax) };
  });
  const monitor = monitorEventLoopDelay({ resolution: SAMPLE_RESOLUTION_MS });
  monitor.enable();
  const timer = setInterval(() => {
    recentMax.push(foldDelays(monitor, series, SAMPLE_RESOLUTION_MS));
    if (recentMax.length > MAX_WINDOW_FOLDS) recentMax.shift();
  }, FOLD_MS);
  timer.unref();
  return () => {
    clearInterval(timer);
    monitor.disable();
  };
}
