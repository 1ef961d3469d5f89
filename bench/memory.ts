/** Memory of a benchmarked process group, read through the memory probe it was started with. */
import { MEMORY_LINE_PREFIX, type MemoryReading } from './memory-probe.js';
import { signalGroup, type Child } from './child-processes.js';
import type { MemoryFigures } from './bench-types.js';
import { groupStats } from './process-cpu.js';

/** Node arguments that load the probe (and expose gc() to it). */
export function memoryProbeArgs(probeEntry: string): string[] {
  return ['--expose-gc', '--import', probeEntry];
}

/** Sums the readings of processes of one group. */
export function sumReadings(readings: MemoryReading[]): MemoryFigures {
  const mib = (bytes: number): number => bytes / (1 << 20);
  const total = (pick: (r: MemoryReading) => number | undefined): number | undefined =>
    readings.every((r) => pick(r) !== undefined) ? mib(readings.reduce((sum, r) => sum + (pick(r) ?? 0), 0)) : undefined;
  return {
    processes: readings.length,
    rssMiB: total((r) => r.rssBytes) ?? 0,
    heapUsedMiB: total((r) => r.heapUsedBytes) ?? 0,
    rssAfterGcMiB: total((r) => r.rssAfterGcBytes),
    heapUsedAfterGcMiB: total((r) => r.heapUsedAfterGcBytes),
    heapTotalAfterGcMiB: total((r) => r.heapTotalAfterGcBytes),
    externalAfterGcMiB: total((r) => r.externalAfterGcBytes),
    anonAfterGcMiB: total((r) => r.anonAfterGcBytes),
    fileAfterGcMiB: total((r) => r.fileAfterGcBytes),
    ...(readings.every((r) => r.spacesAfterGc !== undefined) ? { spacesAfterGcMiB: sumSpaces(readings) } : {}),
  };
}

/** V8's heap spaces summed over the processes: MiB committed and used by each. */
function sumSpaces(readings: MemoryReading[]): Record<string, { committedMiB: number; usedMiB: number }> {
  const spaces: Record<string, { committedMiB: number; usedMiB: number }> = {};
  for (const reading of readings) {
    for (const [name, space] of Object.entries(reading.spacesAfterGc ?? {})) {
      const sum = (spaces[name] ??= { committedMiB: 0, usedMiB: 0 });
      sum.committedMiB += space.committedBytes / (1 << 20);
      sum.usedMiB += space.usedBytes / (1 << 20);
    }
  }
  return spaces;
}

/**
 * Asks every process of the child's group for its memory (SIGUSR2 to the group) and sums the answers; undefined
 * when none answered within `timeoutMs`.
 */
export async function readMemory(child: Child, timeoutMs = 30_000): Promise<MemoryFigures | undefined> {
  const pid = child.proc.pid;
  const stdout = child.proc.stdout;
  if (pid === undefined || stdout === null) return undefined;
  const expected = Math.max(1, groupStats(pid)?.length ?? 1);
  const readings: MemoryReading[] = [];
  await new Promise<void>((done) => {
    let buffered = '';
    const timer = setTimeout(finish, timeoutMs);
    function onData(data: Buffer): void {
      buffered += data.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith(MEMORY_LINE_PREFIX)) continue;
        try {
          readings.push(JSON.parse(line.slice(MEMORY_LINE_PREFIX.length)) as MemoryReading);
        } catch {
          /* a line cut by other output: ignored */
        }
      }
      if (readings.length >= expected) finish();
    }
    function finish(): void {
      clearTimeout(timer);
      stdout?.off('data', onData);
      done();
    }
    stdout.on('data', onData);
    signalGroup(child, 'SIGUSR2');
  });
  return readings.length === 0 ? undefined : sumReadings(readings);
}
