/**
 * Overload judged inside the gateway: its own `unigate_admission_latency_seconds` histogram (arrival to the last
 * byte, by outcome: admitted or refused) and its `unigate_requests_total` 2xx count, read from /metrics before and
 * after an open-loop run. The open-loop client saturates its own core before the gateway does, so its latencies
 * include its own queueing; these do not. A p99 is the upper bound of the bucket it falls in.
 */
import type { AdmissionReading } from './bench-types.js';
import { p99BetweenMs, type HistogramReading } from './loop-holds.js';

export interface AdmissionSnapshot {
  byOutcome: Map<string, HistogramReading>;
  /** 2xx answers on the API listener so far */
  ok2xx: number;
  readAtMs: number;
}

const BUCKET_LINE = /^unigate_admission_latency_seconds_bucket\{([^}]*)\} (\S+)$/;
const REQUESTS_LINE = /^unigate_requests_total\{([^}]*)\} (\S+)$/;
const OUTCOME_LABEL = /outcome="([^"]+)"/;
const LE_LABEL = /le="([^"]+)"/;
const STATUS_2XX = /status="2\d\d"/;
const ADMIN_PROTOCOL = /protocol="admin"/;

/** Parses the admission histogram and the 2xx total out of a Prometheus text exposition. */
export function parseAdmission(text: string): AdmissionSnapshot {
  const byOutcome = new Map<string, HistogramReading>();
  let ok2xx = 0;
  for (const line of text.split('\n')) {
    const bucket = BUCKET_LINE.exec(line);
    if (bucket !== null) {
      const outcome = OUTCOME_LABEL.exec(bucket[1] ?? '')?.[1];
      const le = LE_LABEL.exec(bucket[1] ?? '')?.[1];
      if (outcome === undefined || le === undefined) continue;
      let reading = byOutcome.get(outcome);
      if (reading === undefined) byOutcome.set(outcome, (reading = { buckets: [], count: 0, sum: 0 }));
      const bound = le === '+Inf' ? Infinity : Number(le);
      reading.buckets.push({ le: bound, count: Number(bucket[2]) });
      if (bound === Infinity) reading.count = Number(bucket[2]);
      continue;
    }
    const requests = REQUESTS_LINE.exec(line);
    // Admin answers are not goodput: the reading's own GET /metrics is counted after its text was rendered, so the
    // reading taken before a run would add itself to the run's 2xx.
    if (requests !== null && STATUS_2XX.test(requests[1] ?? '') && !ADMIN_PROTOCOL.test(requests[1] ?? '')) ok2xx += Number(requests[2]);
  }
  return { byOutcome, ok2xx, readAtMs: performance.now() };
}

export async function readAdmission(base: string, adminToken: string): Promise<AdmissionSnapshot | null> {
  try {
    const response = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${adminToken}` }, signal: AbortSignal.timeout(5000) });
    if (!response.ok) return null;
    return parseAdmission(await response.text());
  } catch {
    return null;
  }
}

/** What the gateway answered between two snapshots. */
export function admissionBetween(before: AdmissionSnapshot, after: AdmissionSnapshot, runSeconds: number): AdmissionReading {
  const count = (outcome: string): number => (after.byOutcome.get(outcome)?.count ?? 0) - (before.byOutcome.get(outcome)?.count ?? 0);
  return {
    admitted: count('admitted'),
    admittedP99Ms: p99BetweenMs(before.byOutcome.get('admitted'), after.byOutcome.get('admitted')),
    refused: count('refused'),
    refusedP99Ms: p99BetweenMs(before.byOutcome.get('refused'), after.byOutcome.get('refused')),
    goodputPerSec: runSeconds > 0 ? (after.ok2xx - before.ok2xx) / runSeconds : null,
  };
}
