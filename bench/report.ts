/** The benchmark's table. */
import { type ScenarioReport } from './bench-types.js';

export function fmt(n: number | undefined, digits = 1): string {
  return n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits);
}

export function formatTable(scenarios: ScenarioReport[]): string {
  const header = ['scenario', 'direct req/s', 'gateway req/s', 'ratio', 'direct p50/p99 ms', 'gateway p50/p99 ms', 'added p50 ms', 'gw CPU µs/req', 'errors d/g'];
  const rows = scenarios.map((s) => [
    s.name,
    fmt(s.direct?.requestsPerSec, 0),
    fmt(s.gateway?.requestsPerSec, 0),
    fmt(s.ratio, 2),
    s.direct ? `${fmt(s.direct.latencyP50Ms, 3)} / ${fmt(s.direct.latencyP99Ms, 3)}` : '-',
    s.gateway ? `${fmt(s.gateway.latencyP50Ms, 3)} / ${fmt(s.gateway.latencyP99Ms, 3)}` : '-',
    fmt(s.addedP50Ms, 3),
    fmt(s.gateway?.cpuMicrosPerRequest, 0),
    `${s.direct ? s.direct.non2xx + s.direct.errors + s.direct.mismatches : '-'} / ${s.gateway ? s.gateway.non2xx + s.gateway.errors + s.gateway.mismatches : '-'}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

