import { getHeapSpaceStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { IdleMemoryRelief } from '../../../src/shared/idle-memory-relief.js';

/** Bytes V8 holds from the OS for its young generation. */
function youngGenerationBytes(): number {
  return getHeapSpaceStatistics().find((space) => space.space_name === 'new_space')?.physical_space_size ?? 0;
}

/** A relief fed scripted event-loop utilizations, one per check of 1 s, counting its collections. */
function scripted(idleMs: number, options: { inFlight?: () => number } = {}) {
  const samples: number[] = [];
  let collections = 0;
  const relief = new IdleMemoryRelief({
    idleMs,
    inFlight: options.inFlight ?? (() => 0),
    collect: () => {
      collections += 1;
    },
    utilization: () => samples.shift() ?? 0,
  });
  const run = (utilizations: number[]): boolean[] => {
    samples.push(...utilizations);
    return utilizations.map(() => relief.check(1000));
  };
  return { run, collections: () => collections };
}

describe('IdleMemoryRelief', () => {
  it('collects once after the set quiet time that follows load, not before', () => {
    const relief = scripted(3000);
    expect(relief.run([0.9, 0.8, 0.01, 0.01])).toEqual([false, false, false, false]);
    expect(relief.run([0.01])).toEqual([true]);
    // Staying quiet does not collect again.
    expect(relief.run([0.01, 0.01, 0.01, 0.01, 0.01])).toEqual([false, false, false, false, false]);
    expect(relief.collections()).toBe(1);
  });

  it('never collects in a process that saw no load (background timers only)', () => {
    const relief = scripted(2000);
    relief.run(Array.from({ length: 20 }, () => 0.03));
    expect(relief.collections()).toBe(0);
  });

  it('starts the quiet time over when load returns, and collects again after the next burst', () => {
    const relief = scripted(2000);
    relief.run([0.9, 0.01, 0.5, 0.01]);
    expect(relief.collections()).toBe(0);
    relief.run([0.01]);
    expect(relief.collections()).toBe(1);
    relief.run([0.7, 0.01, 0.01]);
    expect(relief.collections()).toBe(2);
  });

  it('waits while a request is in flight, however quiet the event loop is', () => {
    let inFlight = 1;
    const relief = scripted(2000, { inFlight: () => inFlight });
    relief.run([0.9, 0.01, 0.01, 0.01, 0.01]);
    expect(relief.collections()).toBe(0);
    inFlight = 0;
    relief.run([0.01, 0.01]);
    expect(relief.collections()).toBe(1);
  });

  it('never collects when turned off (0)', () => {
    const relief = scripted(0);
    expect(relief.run([0.9, 0.01, 0.01, 0.01])).toEqual([false, false, false, false]);
  });

  it('runs a real full collection by default without --expose-gc', async () => {
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
    const garbage = new WeakRef({ payload: 'x'.repeat(1000) });
    // A WeakRef's target stays alive until the job that made it ends.
    await new Promise((resolve) => setTimeout(resolve, 0));
    const samples = [0.9, 0.01];
    const collected: number[] = [];
    const relief = new IdleMemoryRelief({
      idleMs: 1000,
      inFlight: () => 0,
      utilization: () => samples.shift() ?? 0,
      onCollected: ({ durationMs }) => collected.push(durationMs),
    });
    relief.check(1000);
    expect(relief.check(1000)).toBe(true);
    expect(collected).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(garbage.deref()).toBeUndefined();
    // The main context's globals stay as they were.
    expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
  });

  it('gives back the young generation load grew: a plain full collection would keep it', async () => {
    // Load: short-lived objects with many survivors per scavenge, as requests in flight are; V8 grows its young
    // generation to tens of MiB and keeps it after the load.
    const survivors: unknown[] = new Array(300_000);
    for (let n = 0; n < 2_000_000; n += 1) survivors[n % survivors.length] = { n, pair: [n, n + 1] };
    survivors.fill(undefined);
    const grown = youngGenerationBytes();
    expect(grown).toBeGreaterThan(8 * 2 ** 20);
    const samples = [0.9, 0.01];
    const relief = new IdleMemoryRelief({ idleMs: 1000, inFlight: () => 0, utilization: () => samples.shift() ?? 0 });
    relief.check(1000);
    expect(relief.check(1000)).toBe(true);
    expect(youngGenerationBytes()).toBeLessThan(4 * 2 ** 20);
  }, 30_000);
});
