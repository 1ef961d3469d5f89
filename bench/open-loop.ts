/**
 * Load that does not wait for answers: an open-loop generator (requests sent at a fixed rate whatever the
 * server does, as real clients arriving independently would) and a burst of slow streams opened at once.
 */
import { Pool } from 'undici';
import type { RequestSpec } from './requests.js';
import { percentile } from './measure.js';
import { sleep } from './child-processes.js';

export interface OpenLoopResult {
  offeredPerSec: number;
  sent: number;
  /** 2xx answers whose body passed the check. */
  admitted: number;
  /** 503 answers (the gateway's `overloaded`). */
  shed: number;
  /** Other statuses, failed checks, connection errors. */
  failed: number;
  /** The failed ones by reason: `<status>` (a 2xx whose body failed the check: `<status> check`), or the error's code. */
  failures: Record<string, number>;
  /** The rate the generator reached: a loaded machine can keep it from sending at `offeredPerSec`. */
  sentPerSec: number;
  /** No complete answer within the timeout. */
  timedOut: number;
  admittedP50Ms?: number;
  admittedP99Ms?: number;
  shedP50Ms?: number;
  shedP99Ms?: number;
  /** shed ÷ sent */
  shedShare: number;
}

function poolFor(url: URL): Pool {
  return new Pool(url.origin, { connections: null, pipelining: 1, keepAliveTimeout: 30_000 });
}

/** Sends `spec` at `ratePerSec` for `seconds`, then waits (at most `timeoutMs`) for the answers still due. */
export async function openLoop(spec: RequestSpec, ratePerSec: number, seconds: number, timeoutMs = 10_000): Promise<OpenLoopResult> {
  const url = new URL(spec.url);
  const pool = poolFor(url);
  const admittedMs: number[] = [];
  const shedMs: number[] = [];
  const failures: Record<string, number> = {};
  const fail = (reason: string): void => {
    failures[reason] = (failures[reason] ?? 0) + 1;
  };
  let timedOut = 0;
  let sent = 0;
  const pending = new Set<Promise<void>>();
  const fire = (): void => {
    const startedAt = performance.now();
    const signal = AbortSignal.timeout(timeoutMs);
    const done = pool.request({ method: 'POST', path: `${url.pathname}${url.search}`, headers: spec.headers, body: spec.body, signal })
      .then(async ({ statusCode, body }) => {
        const text = await body.text();
        const ms = performance.now() - startedAt;
        if (statusCode === 503) shedMs.push(ms);
        else if (statusCode >= 200 && statusCode < 300 && spec.verify(text)) admittedMs.push(ms);
        else fail(statusCode >= 200 && statusCode < 300 ? `${statusCode} check` : String(statusCode));
      }, (error: unknown) => {
        if (signal.aborted) timedOut += 1;
        else fail(String((error as { code?: unknown }).code ?? (error as Error).name ?? 'error'));
      })
      .finally(() => pending.delete(done));
    pending.add(done);
  };
  const startedAt = performance.now();
  const endAt = startedAt + seconds * 1000;
  for (let now = startedAt; now < endAt; now = performance.now()) {
    const due = Math.floor(((now - startedAt) / 1000) * ratePerSec);
    while (sent < due) {
      fire();
      sent += 1;
    }
    await sleep(1);
  }
  const sendingSeconds = (performance.now() - startedAt) / 1000;
  await Promise.race([Promise.all(pending), sleep(timeoutMs + 1000)]);
  await pool.destroy();
  admittedMs.sort((a, b) => a - b);
  shedMs.sort((a, b) => a - b);
  return {
    offeredPerSec: ratePerSec,
    sent,
    admitted: admittedMs.length,
    shed: shedMs.length,
    failed: Object.values(failures).reduce((sum, count) => sum + count, 0),
    failures,
    sentPerSec: sent / sendingSeconds,
    timedOut,
    admittedP50Ms: percentile(admittedMs, 0.5),
    admittedP99Ms: percentile(admittedMs, 0.99),
    shedP50Ms: percentile(shedMs, 0.5),
    shedP99Ms: percentile(shedMs, 0.99),
    shedShare: sent > 0 ? shedMs.length / sent : 0,
  };
}

export interface SlowStreamsResult {
  streams: number;
  /** Streams answered 200 whose first body byte arrived within the timeout. */
  opened: number;
  /** Answers by HTTP status ("error": no answer). */
  statusCodes: Record<string, number>;
  /** Streams that ended with a body that passed the check. */
  completed: number;
  ttfbP50Ms?: number;
  ttfbP99Ms?: number;
  durationP99Ms?: number;
}

/** Opens `streams` streaming requests at once and measures when each sends its first byte and when it ends. */
export async function slowStreams(spec: RequestSpec, streams: number, timeoutMs = 60_000): Promise<SlowStreamsResult> {
  const url = new URL(spec.url);
  const pool = poolFor(url);
  const ttfb: number[] = [];
  const durations: number[] = [];
  let completed = 0;
  const statusCodes: Record<string, number> = {};
  const startedAt = performance.now();
  await Promise.all(Array.from({ length: streams }, async () => {
    try {
      const { statusCode, body } = await pool.request({ method: 'POST', path: `${url.pathname}${url.search}`, headers: spec.headers, body: spec.body, signal: AbortSignal.timeout(timeoutMs) });
      statusCodes[statusCode] = (statusCodes[statusCode] ?? 0) + 1;
      let text = '';
      let first = statusCode === 200;
      for await (const chunk of body) {
        if (first) {
          ttfb.push(performance.now() - startedAt);
          first = false;
        }
        text += (chunk as Buffer).toString('utf8');
      }
      durations.push(performance.now() - startedAt);
      if (statusCode === 200 && spec.verify(text)) completed += 1;
    } catch {
      statusCodes['error'] = (statusCodes['error'] ?? 0) + 1;
    }
  }));
  await pool.destroy();
  ttfb.sort((a, b) => a - b);
  durations.sort((a, b) => a - b);
  return {
    streams,
    opened: ttfb.length,
    completed,
    statusCodes,
    ttfbP50Ms: percentile(ttfb, 0.5),
    ttfbP99Ms: percentile(ttfb, 0.99),
    durationP99Ms: percentile(durations, 0.99),
  };
}
