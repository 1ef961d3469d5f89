/** The benchmark's table. */
import type { UpstreamProtocolResult } from './upstream-protocols.js';
import type { MemoryFigures, MemoryReport, OverloadReport, ScenarioReport, SideResult, SlowStreamsReport, StorageComparison } from './bench-types.js';

export function fmt(n: number | undefined, digits = 1): string {
  return n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits);
}

/**
 * One row per scenario: direct, bare proxy, floor proxy (the least a metered gateway does; `-` where the gateway
 * translates) and gateway, with the gateway's ratios to each and the floor's CPU against the bare proxy's.
 */
export function formatTable(scenarios: ScenarioReport[]): string {
  const header = [
    'scenario', 'direct req/s', 'bare req/s', 'floor req/s', 'gateway req/s', 'gw/direct', 'gw/bare', 'floor/bare', 'gw/floor',
    'direct p50/p99 ms', 'bare p50/p99 ms', 'floor p50/p99 ms', 'gateway p50/p99 ms', 'gw−bare p50/p99 ms',
    'CPU µs/req bare/floor/gw', 'gw/bare CPU', 'floor/bare CPU', 'gw/floor CPU', 'errors d/b/f/g', 'load generator',
  ];
  const errors = (side: ScenarioReport['direct']): string => (side ? String(side.non2xx + side.errors + side.mismatches) : '-');
  const latencies = (side: ScenarioReport['direct']): string => (side ? `${fmt(side.latencyP50Ms, 3)} / ${fmt(side.latencyP99Ms, 3)}` : '-');
  const rows = scenarios.map((s) => [
    s.name,
    fmt(s.direct?.requestsPerSec, 0),
    fmt(s.bare?.requestsPerSec, 0),
    fmt(s.floor?.requestsPerSec, 0),
    fmt(s.gateway?.requestsPerSec, 0),
    fmt(s.ratio, 2),
    fmt(s.bareRatio, 2),
    fmt(s.floorBareRatio, 2),
    fmt(s.gatewayFloorRatio, 2),
    latencies(s.direct),
    latencies(s.bare),
    latencies(s.floor),
    latencies(s.gateway),
    s.overBareP50Ms === undefined ? '-' : `${fmt(s.overBareP50Ms, 3)} / ${fmt(s.overBareP99Ms, 3)}`,
    `${fmt(s.bare?.cpuMicrosPerRequest, 0)} / ${fmt(s.floor?.cpuMicrosPerRequest, 0)} / ${fmt(s.gateway?.cpuMicrosPerRequest, 0)}`,
    fmt(s.cpuRatioToBare, 2),
    fmt(s.floorCpuRatioToBare, 2),
    fmt(s.cpuRatioToFloor, 2),
    `${errors(s.direct)} / ${errors(s.bare)} / ${errors(s.floor)} / ${errors(s.gateway)}`,
    generators([s.direct, s.bare, s.floor, s.gateway]),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** The generator of the measured sides: one name when they agree, else each side's (`-` where not run). */
function generators(sides: Array<SideResult | undefined>): string {
  const names = new Set(sides.filter((side) => side !== undefined).map((side) => side.generator));
  return names.size <= 1 ? ([...names][0] ?? '-') : sides.map((side) => side?.generator ?? '-').join(' / ');
}

/** Rows of strings as a table: first column left-aligned, the rest right-aligned. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function formatOverload(runs: OverloadReport[]): string {
  return table(
    ['open loop (gateway)', 'capacity req/s', 'offered req/s', 'sent', 'sent req/s', 'admitted', 'admitted p50/p99 ms', 'after warm-up p50/p99 ms', '503 share', '503 p50/p99 ms', 'failed', 'timed out', 'failed by reason', 'late sends', 'waited for a connection', 'max connections', 'generator CPU'],
    runs.map((r) => [
      r.name,
      fmt(r.capacityPerSec, 0),
      fmt(r.offeredPerSec, 0),
      String(r.sent),
      fmt(r.sentPerSec, 0),
      String(r.admitted),
      `${fmt(r.admittedP50Ms, 1)} / ${fmt(r.admittedP99Ms, 1)}`,
      `${fmt(r.admittedAfterWarmUpP50Ms, 1)} / ${fmt(r.admittedAfterWarmUpP99Ms, 1)}`,
      `${fmt(r.shedShare * 100, 1)} %`,
      `${fmt(r.shedP50Ms, 2)} / ${fmt(r.shedP99Ms, 2)}`,
      String(r.failed),
      String(r.timedOut),
      Object.entries(r.failures).map(([reason, count]) => `${reason}: ${count}`).join(', ') || '-',
      String(r.lateSends),
      String(r.waitedForConnection),
      String(r.maxOpenConnections),
      r.generatorCpuShare.map((share) => `${fmt(share * 100, 0)} %`).join(' + '),
    ]),
  );
}

/**
 * The same open-loop runs as the gateway saw them (its own admission-latency histogram): admitted and refused answers
 * with their p99 (bucket bounds: "≤ 10" means within 10 ms), and goodput (its 2xx answers per second) against the
 * closed-loop capacity.
 */
export function formatOverloadGatewaySide(runs: OverloadReport[]): string {
  const bound = (ms: number | null): string => (ms === null ? '-' : ms === Infinity ? '> 10 s' : `≤ ${fmt(ms, ms < 1 ? 2 : 0)}`);
  return table(
    ['open loop (gateway-side)', 'admitted', 'admitted p99 ms', 'refused', 'refused p99 ms', 'goodput req/s', 'goodput/capacity'],
    runs.filter((r) => r.gatewaySide !== undefined).map((r) => {
      const side = r.gatewaySide!;
      return [
        r.name,
        String(side.admitted),
        bound(side.admittedP99Ms),
        String(side.refused),
        bound(side.refusedP99Ms),
        fmt(side.goodputPerSec ?? undefined, 0),
        side.goodputPerSec === null || r.capacityPerSec <= 0 ? '-' : fmt(side.goodputPerSec / r.capacityPerSec, 2),
      ];
    }),
  );
}

/** Each open-loop run second by second (by when requests were scheduled): where its latency came from. */
export function formatOverloadTimeline(runs: OverloadReport[]): string {
  return table(
    ['open loop by second', 'second', 'admitted', '503', 'admitted p50/p99 ms'],
    runs.flatMap((r) => r.timeline.map((second) => [
      r.name,
      String(second.second),
      String(second.admitted),
      String(second.shed),
      `${fmt(second.admittedP50Ms, 1)} / ${fmt(second.admittedP99Ms, 1)}`,
    ])),
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

export function formatStorageComparison(runs: StorageComparison[]): string {
  const latencies = (side: SideResult | undefined): string => (side ? `${fmt(side.latencyP50Ms, 3)} / ${fmt(side.latencyP99Ms, 3)}` : '-');
  const errors = (side: SideResult | undefined): string => (side ? String(side.non2xx + side.errors + side.mismatches) : '-');
  return table(
    ['storage (gateway)', 'sqlite req/s', 'pg+redis req/s', 'pg+redis/sqlite', 'sqlite p50/p99 ms', 'pg+redis p50/p99 ms', 'CPU µs/req sqlite/pg+redis', 'Redis CPU µs/req', 'Redis commands/req (in scripts too)', 'Redis commands sent/req', 'PostgreSQL statements/req', 'errors s/p', 'load generator'],
    runs.map((r) => [
      r.name,
      fmt(r.sqlite?.requestsPerSec, 0),
      fmt(r.postgresRedis?.requestsPerSec, 0),
      fmt(r.ratio, 2),
      latencies(r.sqlite),
      latencies(r.postgresRedis),
      `${fmt(r.sqlite?.cpuMicrosPerRequest, 0)} / ${fmt(r.postgresRedis?.cpuMicrosPerRequest, 0)}`,
      fmt(r.postgresRedis?.redisCpuMicrosPerRequest, 0),
      fmt(r.postgresRedis?.redisCommandsPerRequest, 1),
      fmt(r.postgresRedis?.redisCommandsSentPerRequest, 2),
      fmt(r.postgresRedis?.postgresStatementsPerRequest, 3),
      `${errors(r.sqlite)} / ${errors(r.postgresRedis)}`,
      generators([r.sqlite, r.postgresRedis]),
    ]),
  );
}

export function formatMemory(readings: MemoryReport[]): string {
  const figures = (m: MemoryFigures | undefined): string[] =>
    m === undefined
      ? ['-', '-', '-', '-', '-']
      : [
          fmt(m.rssMiB, 0),
          fmt(m.heapUsedMiB, 0),
          fmt(m.rssAfterGcMiB, 0),
          `${fmt(m.anonAfterGcMiB, 0)} / ${fmt(m.fileAfterGcMiB, 0)}`,
          `${fmt(m.heapUsedAfterGcMiB, 0)} / ${fmt(m.heapTotalAfterGcMiB, 0)} / ${fmt(m.externalAfterGcMiB, 0)}`,
        ];
  return table(
    [
      'memory after', 'gateway', 'idle ms', 'gw RSS MiB', 'gw heap used', 'gw RSS after GC', 'gw anon/file after GC', 'gw heap used/total/ext after GC',
      'bare RSS MiB', 'bare heap used', 'bare RSS after GC', 'bare anon/file after GC', 'bare heap used/total/ext after GC',
    ],
    readings.map((r) => [r.after, r.gateway, String(r.idleMs), ...figures(r.gatewayMemory), ...figures(r.bareMemory)]),
  );
}

/** Event-loop delay and SQLite write holds of the gateway, per scenario (bucket bounds: "≤ 2.5" means within 2.5 ms). */
export function formatLoopHolds(scenarios: ScenarioReport[]): string {
  const bound = (ms: number | null): string => (ms === null ? '-' : ms === Infinity ? '> max bucket' : `≤ ${fmt(ms, ms < 1 ? 2 : 1)}`);
  const writers = [...new Set(scenarios.flatMap((s) => s.gatewayLoop?.writes.map((write) => write.writer) ?? []))].sort();
  return table(
    ['event loop (gateway)', 'delay mean ms', 'delay p99 ms', 'delay max ms (last 10 s)', 'GC pauses minor / major', 'GC ms/s', 'GC µs/req', ...writers.map((writer) => `SQLite ${writer}: n, mean / p99 ms`)],
    scenarios.filter((s) => s.gatewayLoop !== undefined).map((s) => {
      const loop = s.gatewayLoop!;
      const gc = loop.gc;
      const requestsPerSec = s.gateway?.requestsPerSec;
      return [
        s.name,
        fmt(loop.delayMeanMs ?? undefined, 2),
        bound(loop.delayP99Ms),
        fmt(loop.delayMaxMs ?? undefined, 1),
        gc === null ? '-' : `${gc.pauses.minor ?? 0} / ${gc.pauses.major ?? 0}`,
        fmt(gc?.msPerSecond ?? undefined, 1),
        // The collections' time spread over the requests served meanwhile (warm-up included, at the measured rate).
        gc?.msPerSecond == null || requestsPerSec === undefined || requestsPerSec <= 0 ? '-' : fmt((gc.msPerSecond * 1000) / requestsPerSec, 1),
        ...writers.map((writer) => {
          const write = loop.writes.find((entry) => entry.writer === writer);
          return write === undefined ? '-' : `${write.count}, ${fmt(write.meanMs ?? undefined, 2)} / ${bound(write.p99Ms)}`;
        }),
      ];
    }),
  );
}

export function formatUpstreamProtocols(results: UpstreamProtocolResult[]): string {
  return table(
    ['upstream protocol (TLS)', 'req/s', 'client CPU µs/req'],
    results.map((r) => [r.protocol, fmt(r.requestsPerSec, 0), fmt(r.clientCpuMicrosPerRequest, 1)]),
  );
}
