/**
 * Load that does not wait for answers: an open-loop generator (requests sent at a fixed rate whatever the
 * server does, as real clients arriving independently would), spread over processes so that it outruns the gateway,
 * and a burst of slow streams opened at once.
 */
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Pool } from 'undici';
import type { RequestSpec } from './requests.js';
import { percentile } from './measure.js';
import type { OpenLoopConfig, OpenLoopProcessResult } from './open-loop-generator.js';

export interface OpenLoopResult {
  offeredPerSec: number;
  /** Requests written to a connection. */
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
  /** No complete answer within the timeout of its scheduled time. */
  timedOut: number;
  /** Latencies are from each request's scheduled time, so they include any wait for a connection or a late timer. */
  admittedP50Ms?: number;
  admittedP99Ms?: number;
  shedP50Ms?: number;
  shedP99Ms?: number;
  /** shed ÷ sent */
  shedShare: number;
  /** Requests written more than 10 ms after their scheduled time: the generator itself fell behind when many did. */
  lateSends: number;
  /** Requests that waited because every connection the generator may open was busy. */
  waitedForConnection: number;
  /** Most connections open at once, all generator processes together. */
  maxOpenConnections: number;
  /** The generator processes' CPU time over their sending time, each (1 = a whole CPU). */
  generatorCpuShare: number[];
  /** Admitted latencies of requests scheduled after the first OPEN_LOOP_WARM_UP_SECONDS. */
  admittedAfterWarmUpP50Ms?: number;
  admittedAfterWarmUpP99Ms?: number;
  timeline: OpenLoopSecond[];
}

/** The answers to the requests scheduled within one second of the run. */
export interface OpenLoopSecond {
  /** 0 for the first second of sending. */
  second: number;
  admitted: number;
  shed: number;
  admittedP50Ms?: number;
  admittedP99Ms?: number;
}

/** The first seconds of a run, left out of the "after warm-up" figures: a cold process and a connection flood. */
export const OPEN_LOOP_WARM_UP_SECONDS = 2;

export interface OpenLoopOptions {
  /** Processes the rate is spread over. */
  processes: number;
  /** Connections all processes together open at most. */
  maxConnections: number;
  timeoutMs: number;
  /** Where the processes' configurations and results are written. */
  workDir: string;
  /** dist/bench/open-loop-generator.js */
  generatorEntry: string;
}

function poolFor(url: URL): Pool {
  return new Pool(url.origin, { connections: null, pipelining: 1, keepAliveTimeout: 30_000 });
}

function runGeneratorProcess(entry: string, configPath: string, timeoutMs: number): Promise<void> {
  return new Promise((done, fail) => {
    execFile(process.execPath, [entry, configPath], { timeout: timeoutMs, maxBuffer: 1 << 20 }, (error, _stdout, stderr) => {
      if (error) fail(new Error(`open-loop generator failed: ${error.message}\n${stderr.slice(-600)}`));
      else done();
    });
  });
}

/**
 * Sends `spec` at `ratePerSec` for `seconds` from `options.processes` generator processes (bench/open-loop-generator.ts),
 * each at its share of the rate, then waits (at most `options.timeoutMs`) for the answers still due, and merges
 * their figures.
 */
export async function openLoop(spec: RequestSpec, ratePerSec: number, seconds: number, options: OpenLoopOptions): Promise<OpenLoopResult> {
  const processes = Math.max(1, Math.floor(options.processes));
  const startAtEpochMs = Date.now() + 500;
  const runs = Array.from({ length: processes }, async (_, index) => {
    const configPath = join(options.workDir, `open-loop-${process.pid}-${index}.json`);
    const config: OpenLoopConfig = {
      url: spec.url,
      headers: spec.headers,
      body: spec.body,
      marker: spec.marker,
      ratePerSec: ratePerSec / processes,
      seconds,
      timeoutMs: options.timeoutMs,
      maxConnections: Math.max(1, Math.floor(options.maxConnections / processes)),
      startAtEpochMs,
      resultPath: `${configPath}.result`,
    };
    writeFileSync(configPath, JSON.stringify(config));
    await runGeneratorProcess(options.generatorEntry, configPath, (seconds + 10) * 1000 + 2 * options.timeoutMs);
    return JSON.parse(readFileSync(config.resultPath, 'utf8')) as OpenLoopProcessResult;
  });
  const results = await Promise.all(runs);
  const timeline = openLoopTimeline(results);
  const afterWarmUp = results.flatMap((r) => r.admittedMs.filter((_, i) => r.admittedScheduledMs[i]! >= OPEN_LOOP_WARM_UP_SECONDS * 1000)).sort((a, b) => a - b);
  const admittedMs = results.flatMap((r) => r.admittedMs).sort((a, b) => a - b);
  const shedMs = results.flatMap((r) => r.shedMs).sort((a, b) => a - b);
  const failures: Record<string, number> = {};
  for (const r of results) for (const [reason, count] of Object.entries(r.failures)) failures[reason] = (failures[reason] ?? 0) + count;
  const sum = (pick: (r: OpenLoopProcessResult) => number): number => results.reduce((total, r) => total + pick(r), 0);
  const sent = sum((r) => r.sent);
  const sendingSeconds = Math.max(...results.map((r) => r.sendingSeconds));
  return {
    offeredPerSec: ratePerSec,
    sent,
    admitted: admittedMs.length,
    shed: shedMs.length,
    failed: Object.values(failures).reduce((total, count) => total + count, 0),
    failures,
    sentPerSec: sendingSeconds > 0 ? sent / sendingSeconds : 0,
    timedOut: sum((r) => r.timedOut),
    admittedP50Ms: percentile(admittedMs, 0.5),
    admittedP99Ms: percentile(admittedMs, 0.99),
    shedP50Ms: percentile(shedMs, 0.5),
    shedP99Ms: percentile(shedMs, 0.99),
    shedShare: sent > 0 ? shedMs.length / sent : 0,
    lateSends: sum((r) => r.lateSends),
    waitedForConnection: sum((r) => r.waitedForConnection),
    maxOpenConnections: sum((r) => r.maxOpen),
    generatorCpuShare: results.map((r) => (r.sendingSeconds > 0 ? r.cpuMs / 1000 / r.sendingSeconds : 0)),
    admittedAfterWarmUpP50Ms: percentile(afterWarmUp, 0.5),
    admittedAfterWarmUpP99Ms: percentile(afterWarmUp, 0.99),
    timeline,
  };
}

/** The processes' answers grouped by the second their requests were scheduled in. */
export function openLoopTimeline(results: readonly Pick<OpenLoopProcessResult, 'admittedMs' | 'admittedScheduledMs' | 'shedScheduledMs'>[]): OpenLoopSecond[] {
  const admitted: number[][] = [];
  const shed: number[] = [];
  const secondOf = (scheduledMs: number): number => Math.max(0, Math.floor(scheduledMs / 1000));
  for (const r of results) {
    r.admittedMs.forEach((ms, i) => (admitted[secondOf(r.admittedScheduledMs[i]!)] ??= []).push(ms));
    for (const scheduledMs of r.shedScheduledMs) shed[secondOf(scheduledMs)] = (shed[secondOf(scheduledMs)] ?? 0) + 1;
  }
  const seconds = Math.max(admitted.length, shed.length);
  return Array.from({ length: seconds }, (_, second) => {
    const latencies = (admitted[second] ?? []).sort((a, b) => a - b);
    return { second, admitted: latencies.length, shed: shed[second] ?? 0, admittedP50Ms: percentile(latencies, 0.5), admittedP99Ms: percentile(latencies, 0.99) };
  });
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
