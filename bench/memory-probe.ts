/**
 * Loaded into the gateway and the bare proxy by the benchmark (`node --expose-gc --import …/memory-probe.js`):
 * on SIGUSR2 the process prints one `MEMORY {json}` line with its RSS and V8 heap used, then runs a full GC
 * (where --expose-gc allows it) and prints the same figures after it. With BENCH_HEAP_SNAPSHOT_DIR set it also
 * writes a heap snapshot there after the GC, for comparing what the heap retains between two readings.
 */
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const MEMORY_LINE_PREFIX = 'MEMORY ';

export interface MemoryReading {
  pid: number;
  rssBytes: number;
  heapUsedBytes: number;
  /** after a full GC; absent where gc() is not exposed */
  rssAfterGcBytes?: number;
  heapUsedAfterGcBytes?: number;
  /** what V8 holds for its heap, and memory outside it that JS objects own (buffers, native addons) */
  heapTotalAfterGcBytes?: number;
  externalAfterGcBytes?: number;
  /** V8's heap spaces after the GC: bytes each holds from the OS (committed) and uses */
  spacesAfterGc?: Record<string, { committedBytes: number; usedBytes: number }>;
  /** resident pages after the GC by kind (Linux only): anonymous (heaps, malloc) and file-backed (the Node binary, libraries) */
  anonAfterGcBytes?: number;
  fileAfterGcBytes?: number;
  snapshot?: string;
}

const gc = (globalThis as { gc?: () => void }).gc;
let readings = 0;

process.on('SIGUSR2', () => {
  const before = process.memoryUsage();
  const reading: MemoryReading = { pid: process.pid, rssBytes: before.rss, heapUsedBytes: before.heapUsed };
  if (gc !== undefined) {
    gc();
    const after = process.memoryUsage();
    reading.rssAfterGcBytes = after.rss;
    reading.heapUsedAfterGcBytes = after.heapUsed;
    reading.heapTotalAfterGcBytes = after.heapTotal;
    reading.externalAfterGcBytes = after.external;
    const resident = residentByKind();
    if (resident !== undefined) {
      reading.anonAfterGcBytes = resident.anonBytes;
      reading.fileAfterGcBytes = resident.fileBytes;
    }
    reading.spacesAfterGc = Object.fromEntries(
      getHeapSpaceStatistics().map((space) => [space.space_name, { committedBytes: space.physical_space_size, usedBytes: space.space_used_size }]),
    );
  }
  const snapshotDir = process.env.BENCH_HEAP_SNAPSHOT_DIR;
  if (snapshotDir) {
    readings += 1;
    reading.snapshot = writeHeapSnapshot(join(snapshotDir, `heap-${process.pid}-${readings}.heapsnapshot`));
  }
  process.stdout.write(`${MEMORY_LINE_PREFIX}${JSON.stringify(reading)}\n`);
});

/** Anonymous and file-backed resident bytes from /proc/self/smaps_rollup; undefined where it cannot be read. */
function residentByKind(): { anonBytes: number; fileBytes: number } | undefined {
  let rollup: string;
  try {
    rollup = readFileSync('/proc/self/smaps_rollup', 'utf8');
  } catch {
    return undefined;
  }
  const kib = (field: string): number => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? 0) * 1024;
  const rss = kib('Rss');
  const anon = kib('Anonymous');
  return { anonBytes: anon, fileBytes: rss - anon };
}
