/**
 * The load generator that outruns the gateway: Debian's `wrk` (C, epoll, one thread by default), driven by a Lua
 * script that sets the POST, checks each 2xx body for a marker string, counts statuses, and prints one JSON line
 * at the end. autocannon (in-process Node) stays the fallback where wrk is missing and cannot be installed.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDebianPackage } from '../test/support/debian-package.js';
import type { SideResult } from './bench-types.js';
import type { RequestSpec } from './requests.js';

export const WRK_PATH = '/usr/bin/wrk';

/** True when wrk is there, after installing Debian's package when it was not and we run as root. */
export function ensureWrk(): boolean {
  return ensureDebianPackage(WRK_PATH, 'wrk', 'bench');
}

/** A Lua string literal holding `text` exactly (three-digit decimal escapes, so a digit after one is not taken into it). */
export function luaString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text, 'utf8')) {
    const printable = byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c;
    out += printable ? String.fromCharCode(byte) : `\\${String(byte).padStart(3, '0')}`;
  }
  return `${out}"`;
}

const RESULT_PREFIX = 'WRK_RESULT ';

/** The Lua script of one side: the request, the body check, and the closing JSON line. */
export function wrkScript(spec: RequestSpec): string {
  const headers = Object.entries(spec.headers).map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  return [
    'wrk.method = "POST"',
    `wrk.body = ${luaString(spec.body)}`,
    ...headers,
    `local marker = ${luaString(spec.marker)}`,
    'local threads = {}',
    'function setup(thread) table.insert(threads, thread) end',
    'function init(args) mismatches = 0; statuses = {} end',
    'function response(status, headers, body)',
    '  statuses[status] = (statuses[status] or 0) + 1',
    '  if status >= 200 and status < 300 and not string.find(body, marker, 1, true) then mismatches = mismatches + 1 end',
    'end',
    'function done(summary, latency, requests)',
    '  local mismatched, codes = 0, {}',
    '  for _, thread in ipairs(threads) do',
    '    mismatched = mismatched + thread:get("mismatches")',
    '    for code, count in pairs(thread:get("statuses")) do codes[code] = (codes[code] or 0) + count end',
    '  end',
    '  local parts = {}',
    '  for code, count in pairs(codes) do table.insert(parts, string.format("\\"%d\\":%d", code, count)) end',
    '  local e = summary.errors',
    `  io.write(string.format('${RESULT_PREFIX}{"durationUs":%d,"requests":%d,"connectErrors":%d,"readErrors":%d,"writeErrors":%d,"timeouts":%d,"non2xx3xx":%d,'`,
    `    .. '"mismatches":%d,"statuses":{%s},"p50Us":%.1f,"p99Us":%.1f,"meanUs":%.1f,"perThread":{"min":%.1f,"max":%.1f,"stdev":%.1f},"threads":%d}\\n',`,
    '    summary.duration, summary.requests, e.connect, e.read, e.write, e.timeout, e.status, mismatched, table.concat(parts, ","),',
    '    latency:percentile(50), latency:percentile(99), latency.mean, requests.min, requests.max, requests.stdev, #threads))',
    'end',
    '',
  ].join('\n');
}

export interface WrkSummary {
  durationUs: number;
  requests: number;
  connectErrors: number;
  readErrors: number;
  writeErrors: number;
  timeouts: number;
  non2xx3xx: number;
  mismatches: number;
  statuses: Record<string, number>;
  p50Us: number;
  p99Us: number;
  meanUs: number;
  /** wrk's requests-per-second samples, per thread */
  perThread: { min: number; max: number; stdev: number };
  threads: number;
}

/** The JSON line the script prints, from wrk's whole output. */
export function parseWrkOutput(output: string): WrkSummary {
  const line = output.split('\n').find((l) => l.startsWith(RESULT_PREFIX));
  if (line === undefined) throw new Error(`wrk printed no result line: ${output.slice(-600)}`);
  return JSON.parse(line.slice(RESULT_PREFIX.length)) as WrkSummary;
}

/** One side's figures from wrk's summary, in the shape the autocannon path gives. */
export function wrkSideResult(url: string, s: WrkSummary): Omit<SideResult, 'cpuMicrosPerRequest'> {
  const seconds = s.durationUs / 1e6;
  let ok2xx = 0;
  for (const [code, count] of Object.entries(s.statuses)) if (Number(code) >= 200 && Number(code) < 300) ok2xx += count;
  const non2xx = s.requests - ok2xx;
  const errors = s.connectErrors + s.readErrors + s.writeErrors + s.timeouts;
  const attempts = s.requests + errors;
  return {
    url,
    generator: 'wrk',
    requestsPerSec: seconds > 0 ? ok2xx / seconds : 0,
    perSecond: { min: s.perThread.min * s.threads, max: s.perThread.max * s.threads, stddev: s.perThread.stdev * s.threads },
    latencyP50Ms: s.p50Us / 1000,
    latencyP99Ms: s.p99Us / 1000,
    latencyAvgMs: s.meanUs / 1000,
    responses: s.requests,
    ok2xx,
    non2xx,
    errors,
    timeouts: s.timeouts,
    mismatches: s.mismatches,
    statusCodes: s.statuses,
    errorRate: attempts > 0 ? Math.min(1, (non2xx + errors + s.mismatches) / attempts) : 1,
  };
}

/** Runs wrk once against `spec` and resolves with its summary. */
export async function runWrk(spec: RequestSpec, opts: { connections: number; threads: number; seconds: number; scriptDir: string }): Promise<WrkSummary> {
  const scriptPath = join(opts.scriptDir, `wrk-${process.pid}-${Date.now()}.lua`);
  writeFileSync(scriptPath, wrkScript(spec));
  const threads = Math.max(1, Math.min(opts.threads, opts.connections));
  const args = ['-t', String(threads), '-c', String(opts.connections), '-d', `${Math.max(1, Math.round(opts.seconds))}s`, '--timeout', '30s', '-s', scriptPath, spec.url];
  const output = await new Promise<string>((done, fail) => {
    execFile(WRK_PATH, args, { timeout: (opts.seconds + 60) * 1000, maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) fail(new Error(`wrk failed: ${error.message}\n${stderr.slice(-600)}`));
      else done(stdout);
    });
  });
  return parseWrkOutput(output);
}
