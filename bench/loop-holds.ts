/**
 * How long the gateway's event loop was held during a scenario, read from its own /metrics before and after the
 * measured run: the event-loop delay histogram (how late a 10 ms timer ran) and, on SQLite, how long each batched
 * write transaction held the loop, by writer. Histograms are cumulative, so a scenario's figures are the difference
 * of two readings; a percentile is the upper bound of the bucket it falls in.
 */

export interface HistogramReading {
  /** Cumulative count per upper bound (seconds), ascending, `+Inf` last. */
  buckets: Array<{ le: number; count: number }>;
  count: number;
  /** Sum of the observed values (seconds). */
  sum: number;
}

export interface LoopHoldsReading {
  delay: HistogramReading | null;
  /** Garbage-collection pauses by kind (minor, major, incremental, weak_callbacks). */
  gc: Map<string, HistogramReading>;
  /** Longest event-loop delay of the gateway's last 10 seconds. */
  delayMaxSeconds: number | null;
  writes: Map<string, HistogramReading>;
  /** When the reading was taken (performance.now(), ms). */
  readAtMs: number;
}

export interface LoopHolds {
  delayMeanMs: number | null;
  delayP99Ms: number | null;
  delayMaxMs: number | null;
  /** Per writer (usage, money, checkpoints): transactions in the scenario, their mean and the bucket bound of their p99. */
  writes: Array<{ writer: string; count: number; meanMs: number | null; p99Ms: number | null }>;
  /**
   * Garbage collection between the two readings: pauses by kind, their total (ms) and that total per second of the
   * time between the readings (ms/s: the share of the main thread spent collecting, in thousandths); null when the
   * gateway does not report it.
   */
  gc: { pauses: Record<string, number>; totalMs: number; msPerSecond: number | null } | null;
}

const BUCKET_LINE = /^(unigate_event_loop_delay_seconds|unigate_sqlite_write_seconds|unigate_gc_pause_seconds)_bucket\{([^}]*)\} (\S+)$/;
const SUM_LINE = /^(unigate_event_loop_delay_seconds|unigate_sqlite_write_seconds|unigate_gc_pause_seconds)_sum(?:\{([^}]*)\})? (\S+)$/;
const MAX_LINE = /^unigate_event_loop_delay_max_seconds (\S+)$/;
const WRITER_LABEL = /writer="([^"]+)"/;
const KIND_LABEL = /kind="([^"]+)"/;

/** Parses the three histograms and the max gauge out of a Prometheus text exposition. */
export function parseLoopHolds(text: string): LoopHoldsReading {
  let delay: HistogramReading | null = null;
  let delayMaxSeconds: number | null = null;
  const writes = new Map<string, HistogramReading>();
  const gc = new Map<string, HistogramReading>();
  const add = (reading: HistogramReading, le: number, count: number): void => {
    reading.buckets.push({ le, count });
    if (le === Infinity) reading.count = count;
  };
  const readingOf = (metric: string, labels: string): HistogramReading => {
    if (metric === 'unigate_event_loop_delay_seconds') return (delay ??= { buckets: [], count: 0, sum: 0 });
    const [byName, label] = metric === 'unigate_gc_pause_seconds' ? [gc, KIND_LABEL] : [writes, WRITER_LABEL];
    const name = label.exec(labels)?.[1] ?? 'unknown';
    let reading = byName.get(name);
    if (reading === undefined) byName.set(name, (reading = { buckets: [], count: 0, sum: 0 }));
    return reading;
  };
  for (const line of text.split('\n')) {
    const sum = SUM_LINE.exec(line);
    if (sum !== null) {
      readingOf(sum[1] ?? '', sum[2] ?? '').sum = Number(sum[3]);
      continue;
    }
    const max = MAX_LINE.exec(line);
    if (max !== null) {
      delayMaxSeconds = Number(max[1]);
      continue;
    }
    const bucket = BUCKET_LINE.exec(line);
    if (bucket === null) continue;
    const labels = bucket[2] ?? '';
    const le = /le="([^"]+)"/.exec(labels)?.[1];
    if (le === undefined) continue;
    add(readingOf(bucket[1] ?? '', labels), le === '+Inf' ? Infinity : Number(le), Number(bucket[3]));
  }
  return { delay, delayMaxSeconds, writes, gc, readAtMs: performance.now() };
}

/** The upper bound (ms) of the bucket holding the 99th percentile of what was observed between two readings. */
export function p99BetweenMs(before: HistogramReading | null | undefined, after: HistogramReading | null | undefined): number | null {
  return quantileBetweenMs(before, after, 0.99);
}

/** The upper bound (ms) of the bucket the `quantile` (0-1) of what was observed between two readings falls in. */
export function quantileBetweenMs(before: HistogramReading | null | undefined, after: HistogramReading | null | undefined, quantile: number): number | null {
  if (after === null || after === undefined) return null;
  const countBefore = (le: number): number => before?.buckets.find((bucket) => bucket.le === le)?.count ?? 0;
  const total = after.count - (before?.count ?? 0);
  if (total <= 0) return null;
  const rank = Math.ceil(total * quantile);
  for (const bucket of [...after.buckets].sort((left, right) => left.le - right.le)) {
    if (bucket.count - countBefore(bucket.le) >= rank) return bucket.le * 1000;
  }
  return Infinity;
}

/** The mean (ms) of what was observed between two readings. */
export function meanBetweenMs(before: HistogramReading | null | undefined, after: HistogramReading | null | undefined): number | null {
  if (after === null || after === undefined) return null;
  const count = after.count - (before?.count ?? 0);
  return count <= 0 ? null : ((after.sum - (before?.sum ?? 0)) / count) * 1000;
}

export function loopHoldsBetween(before: LoopHoldsReading, after: LoopHoldsReading): LoopHolds {
  return {
    delayMeanMs: meanBetweenMs(before.delay, after.delay),
    delayP99Ms: p99BetweenMs(before.delay, after.delay),
    delayMaxMs: after.delayMaxSeconds === null ? null : after.delayMaxSeconds * 1000,
    writes: [...after.writes].map(([writer, reading]) => ({
      writer,
      count: reading.count - (before.writes.get(writer)?.count ?? 0),
      meanMs: meanBetweenMs(before.writes.get(writer), reading),
      p99Ms: p99BetweenMs(before.writes.get(writer), reading),
    })).filter((write) => write.count > 0),
    gc: gcBetween(before.gc, after.gc, (after.readAtMs - before.readAtMs) / 1000),
  };
}

function gcBetween(before: Map<string, HistogramReading>, after: Map<string, HistogramReading>, seconds: number): LoopHolds['gc'] {
  if (after.size === 0) return null;
  const pauses: Record<string, number> = {};
  let totalSeconds = 0;
  for (const [kind, reading] of after) {
    pauses[kind] = reading.count - (before.get(kind)?.count ?? 0);
    totalSeconds += reading.sum - (before.get(kind)?.sum ?? 0);
  }
  return { pauses, totalMs: totalSeconds * 1000, msPerSecond: seconds > 0 ? (totalSeconds * 1000) / seconds : null };
}

/** Reads the gateway's /metrics (admin token); null when it cannot be read (the bench still reports the rest). */
export async function readLoopHolds(base: string, adminToken: string): Promise<LoopHoldsReading | null> {
  try {
    const response = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${adminToken}` }, signal: AbortSignal.timeout(5000) });
    if (!response.ok) return null;
    return parseLoopHolds(await response.text());
  } catch {
    return null;
  }
}
