/** The benchmark's table. */
import type { OverloadReport, ScenarioReport, SlowStreamsReport } from './bench-types.js';

export function fmt(n: number | undefined, digits = 1): string {
  return n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits);
}

export function formatTable(scenarios: ScenarioReport[]): string {
  const header = [
    'scenario', 'direct req/s', 'bare req/s', 'gateway req/s', 'gw/direct', 'gw/bare',
    'direct p50/p99 ms', 'bare p50/p99 ms', 'gateway p50/p99 ms', 'gw−bare p50/p99 ms',
    'CPU µs/req bare/gw', 'gw/bare CPU', 'errors d/b/g',
  ];
  const errors = (side: ScenarioReport['direct']): string => (side ? String(side.non2xx + side.errors + side.mismatches) : '-');
  const latencies = (side: ScenarioReport['direct']): string => (side ? `${fmt(side.latencyP50Ms, 3)} / ${fmt(side.latencyP99Ms, 3)}` : '-');
  const rows = scenarios.map((s) => [
    s.name,
    fmt(s.direct?.requestsPerSec, 0),
    fmt(s.bare?.requestsPerSec, 0),
    fmt(s.gateway?.requestsPerSec, 0),
    fmt(s.ratio, 2),
    fmt(s.bareRatio, 2),
    latencies(s.direct),
    latencies(s.bare),
    latencies(s.gateway),
    s.overBareP50Ms === undefined ? '-' : `${fmt(s.overBareP50Ms, 3)} / ${fmt(s.overBareP99Ms, 3)}`,
    `${fmt(s.bare?.cpuMicrosPerRequest, 0)} / ${fmt(s.gateway?.cpuMicrosPerRequest, 0)}`,
    fmt(s.cpuRatioToBare, 2),
    `${errors(s.direct)} / ${errors(s.bare)} / ${errors(s.gateway)}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}


/** Rows of strings as a table: first column left-aligned, the rest right-aligned. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatOverload(runs: OverloadReport[]): string {
  return table(
    ['open loop (gateway)', 'capacity req/s', 'offered req/s', 'sent', 'admitted', 'admitted p50/p99 ms', '503 share', '503 p50/p99 ms', 'failed', 'timed out'],
    runs.map((r) => [
      r.name,
      fmt(r.capacityPerSec, 0),
      fmt(r.offeredPerSec, 0),
      String(r.sent),
      String(r.admitted),
      `${fmt(r.admittedP50Ms, 1)} / ${fmt(r.admittedP99Ms, 1)}`,
      `${fmt(r.shedShare * 100, 1)} %`,
      `${fmt(r.shedP50Ms, 2)} / ${fmt(r.shedP99Ms, 2)}`,
      String(r.failed),
      String(r.timedOut),
    ]),
  );
}

export function formatSlowStreams(runs: SlowStreamsReport[]): string {
  return table(
    ['slow streams', 'streams', 'opened', 'completed', 'TTFB p50/p99 ms', 'duration p99 ms', 'statuses'],
    runs.map((r) => [
      r.side,
      String(r.streams),
      String(r.opened),
      String(r.completed),
      `${fmt(r.ttfbP50Ms, 0)} / ${fmt(r.ttfbP99Ms, 0)}`,
      fmt(r.durationP99Ms, 0),
      Object.entries(r.statusCodes).map(([status, count]) => `${status}: ${count}`).join(', '),
    ]),
  );
}
