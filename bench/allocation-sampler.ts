/**
 * Loaded into the gateway with `--import` when the bench runs with BENCH_ALLOCATION_PROFILE_DIR: samples the
 * allocations of the whole process, those already collected included, from start to exit, and writes them to that
 * directory as `allocation-<pid>.heapprofile` (DevTools' sampling heap profile; `node dist/bench/allocation-report.js`
 * reads it). A CPU profile shows time spent collecting, not which code allocated what was collected; this does.
 */
import { Session } from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** One sample per this many bytes allocated, on average: a few thousand samples a second under load. */
const SAMPLING_INTERVAL_BYTES = 32 * 1024;

const directory = process.env.UNIGATE_ALLOCATION_PROFILE_DIR;
if (directory) {
  const session = new Session();
  session.connect();
  // Without the two flags a sampling profile keeps only what is still alive when it stops (Node's typings lack them).
  const parameters = { samplingInterval: SAMPLING_INTERVAL_BYTES, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
  session.post('HeapProfiler.startSampling', parameters);
  process.on('exit', () => {
    // The process's own session answers synchronously, so the profile is written before the process is gone.
    session.post('HeapProfiler.stopSampling', (error, result) => {
      if (error === null) writeFileSync(join(directory, `allocation-${process.pid}.heapprofile`), JSON.stringify(result.profile));
    });
  });
}
