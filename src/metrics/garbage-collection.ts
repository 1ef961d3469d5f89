import { constants, PerformanceObserver } from 'node:perf_hooks';
import type { Histogram, MetricsRegistry } from './metrics-registry.js';

/** Seconds, 0.25 ms to 250 ms: a young-generation scavenge takes about a millisecond, a full collection of a large heap tens. */
export const GC_PAUSE_BUCKETS_SECONDS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25] as const;

/** V8's kinds of collection as Node reports them, under the label value each gets. */
const KIND_LABELS: ReadonlyMap<number, string> = new Map([
  [constants.NODE_PERFORMANCE_GC_MINOR, 'minor'],
  [constants.NODE_PERFORMANCE_GC_MAJOR, 'major'],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 'incremental'],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 'weak_callbacks'],
]);

/** What a `gc` performance entry carries besides its duration (Node's typings leave it out). */
interface GcEntryDetail {
  detail?: { kind?: number } | null;
}

/** The label of a `gc` performance entry's kind (`other` for a kind Node adds later). */
export function gcKindLabel(entry: GcEntryDetail): string {
  const kind = entry.detail?.kind;
  return (kind === undefined ? undefined : KIND_LABELS.get(kind)) ?? 'other';
}

/**
 * `unigate_gc_pause_seconds{kind}`: how long each garbage collection held the main thread, by kind (`minor`: the
 * young generation's scavenge, `major`: a full mark-compact, `incremental`: a step of incremental marking,
 * `weak_callbacks`). Its sum per second is the share of time the process spent collecting. Returns the stop function.
 */
export function observeGarbageCollection(registry: MetricsRegistry): () => void {
  const histogram: Histogram = registry.histogram(
    'unigate_gc_pause_seconds',
    'How long each garbage collection held the main thread, by kind (minor, major, incremental, weak_callbacks).',
    ['kind'],
    GC_PAUSE_BUCKETS_SECONDS,
  );
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) histogram.labels(gcKindLabel(entry as GcEntryDetail)).observe(entry.duration / 1000);
  });
  observer.observe({ entryTypes: ['gc'] });
  return () => observer.disconnect();
}
