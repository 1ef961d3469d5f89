/**
 * With `BENCH_PIN=1`: which CPUs the measured proxies (the gateway, the bare proxy) run on and which the load side
 * (the bench itself, the load generator, the mock upstreams) runs on, so that neither takes the other's CPU and the
 * scheduler does not move them between CPUs mid-run. On a 2-CPU machine: the proxy on CPU 0, everything else on
 * CPU 1. Off by default: the gateway then has one CPU for its main thread and its GC helper threads together, so its
 * figures do not compare with unpinned runs.
 */
import { execFileSync } from 'node:child_process';

export interface CpuPinning {
  /** taskset's CPU list of the measured proxies. */
  proxies: string;
  /** taskset's CPU list of the bench, the load generator and the mocks. */
  load: string;
}

/**
 * The split for `cpuCount` CPUs: the last one for the load side, the others for the proxies; null when pinning is
 * off (`BENCH_PIN` other than 1), there is nothing to split (one CPU), or several gateway workers would share the
 * proxies' CPUs.
 */
export function planPinning(cpuCount: number, env: NodeJS.ProcessEnv): CpuPinning | null {
  if (env.BENCH_PIN !== '1' || cpuCount < 2) return null;
  if (env.BENCH_WORKERS !== undefined && env.BENCH_WORKERS !== '' && env.BENCH_WORKERS !== '1') return null;
  const last = cpuCount - 1;
  return { proxies: last === 1 ? '0' : `0-${last - 1}`, load: String(last) };
}

/** Pins every thread of process `pid` (and what it starts later) to `cpus`; false when taskset is missing or refused. */
export function pinProcess(pid: number, cpus: string): boolean {
  try {
    execFileSync('taskset', ['--all-tasks', '--pid', '--cpu-list', cpus, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
