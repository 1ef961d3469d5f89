import { execFileSync, spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { describe, expect, it } from 'vitest';
import { pinProcess, planPinning } from '../../../bench/cpu-pinning.js';

describe('bench CPU pinning', () => {
  it('splits the last CPU off for the load side, only when asked and when there is something to split', () => {
    expect(planPinning(2, { BENCH_PIN: '1' })).toEqual({ proxies: '0', load: '1' });
    expect(planPinning(8, { BENCH_PIN: '1' })).toEqual({ proxies: '0-6', load: '7' });
    expect(planPinning(8, {})).toBeNull();
    expect(planPinning(1, { BENCH_PIN: '1' })).toBeNull();
    expect(planPinning(8, { BENCH_PIN: '1', BENCH_WORKERS: '2' })).toBeNull();
    expect(planPinning(8, { BENCH_PIN: '1', BENCH_WORKERS: '1' })).toEqual({ proxies: '0-6', load: '7' });
  });

  it.runIf(cpus().length >= 2)('moves every thread of a running process to the CPUs named, and those it starts later', async () => {
    const child = spawn(process.execPath, ['-e', 'console.log("ready"); setTimeout(() => {}, 20000)'], { stdio: ['ignore', 'pipe', 'ignore'] });
    try {
      await new Promise((resolve) => child.once('spawn', resolve));
      const pid = child.pid as number;
      expect(pinProcess(pid, '1')).toBe(true);
      // Node starts its platform and libuv threads after this: they inherit the main thread's CPUs.
      await new Promise((resolve) => child.stdout.once('data', resolve));
      const threads = execFileSync('ls', [`/proc/${pid}/task`], { encoding: 'utf8' }).trim().split('\n');
      expect(threads.length).toBeGreaterThan(1);
      for (const thread of threads) {
        expect(execFileSync('taskset', ['--cpu-list', '--pid', thread], { encoding: 'utf8' })).toMatch(/: 1\n$/);
      }
      expect(pinProcess(pid, '0')).toBe(true);
      for (const thread of threads) {
        expect(execFileSync('taskset', ['--cpu-list', '--pid', thread], { encoding: 'utf8' })).toMatch(/: 0\n$/);
      }
    } finally {
      child.kill('SIGKILL');
    }
  });
});
