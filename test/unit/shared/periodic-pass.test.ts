import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IDLE_BACKOFF_FACTOR, PeriodicPass } from '../../../src/shared/periodic-pass.js';
import { silentLogger, type Logger } from '../../../src/shared/logger.js';
import { onWork, signalWork } from '../../../src/shared/work-signals.js';

/** A pass that records when it ran and answers from a script (true: found work; an Error: fails). */
function scripted(answers: Array<boolean | Error> = []) {
  const startedAt: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let release: (() => void) | null = null;
  let hold = false;
  const pass = async (): Promise<boolean> => {
    startedAt.push(Date.now());
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      if (hold) await new Promise<void>((resolve) => { release = resolve; });
      const answer = answers.shift() ?? false;
      if (answer instanceof Error) throw answer;
      return answer;
    } finally {
      inFlight -= 1;
    }
  };
  return {
    pass,
    startedAt,
    maxInFlight: () => maxInFlight,
    holdNext: () => { hold = true; },
    releaseHeld: () => { hold = false; release?.(); release = null; },
  };
}

function gapsOf(times: readonly number[]): number[] {
  return times.slice(1).map((time, index) => time - (times[index] as number));
}

describe('PeriodicPass', () => {
  const lines: string[] = [];
  const logger: Logger = { ...silentLogger, warn: (message, fields) => lines.push(`${message} ${JSON.stringify(fields)}`) };

  beforeEach(() => {
    vi.useFakeTimers({ now: 1_000_000 });
    lines.length = 0;
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs at once, then doubles its wait after each empty pass up to the maximum', async () => {
    const script = scripted();
    const loop = new PeriodicPass({ name: 'test', baseMs: 100, maxMs: 1000, pass: script.pass, logger });
    loop.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(script.startedAt[0]).toBe(1_000_000);
    expect(gapsOf(script.startedAt).slice(0, 6)).toEqual([200, 400, 800, 1000, 1000, 1000]);
    await loop.stop();
  });

  it('keeps the base interval while passes find work, and backs off once they stop finding it', async () => {
    const script = scripted([true, true, true, false, false]);
    const loop = new PeriodicPass({ name: 'test', baseMs: 100, maxMs: 1000, pass: script.pass, logger });
    loop.start();
    await vi.advanceTimersByTimeAsync(2000);
    expect(gapsOf(script.startedAt).slice(0, 5)).toEqual([100, 100, 100, 200, 400]);
    await loop.stop();
  });

  it('defaults its maximum to the idle factor times the base interval', async () => {
    const script = scripted();
    const loop = new PeriodicPass({ name: 'test', baseMs: 10, pass: script.pass, logger });
    loop.start();
    await vi.advanceTimersByTimeAsync(10 * IDLE_BACKOFF_FACTOR * 20);
    expect(Math.max(...gapsOf(script.startedAt))).toBe(10 * IDLE_BACKOFF_FACTOR);
    expect(loop.waitMs).toBe(10 * IDLE_BACKOFF_FACTOR);
    await loop.stop();
  });

  it('waits firstPassAfterMs before its first pass, and with maxMs = baseMs keeps a fixed interval, empty or failing', async () => {
    const script = scripted([false, new Error('down'), false, true]);
    const loop = new PeriodicPass({ name: 'test', baseMs: 100, maxMs: 100, firstPassAfterMs: 250, pass: script.pass, logger });
    loop.start();
    await vi.advanceTimersByTimeAsync(249);
    expect(script.startedAt).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(script.startedAt[0]).toBe(1_000_250);
    expect(gapsOf(script.startedAt).slice(0, 5)).toEqual([100, 100, 100, 100, 100]);
    await loop.stop();
  });

  it('a nudge runs a pass at once and brings the wait back to the base interval', async () => {
    const script = scripted();
    const loop = new PeriodicPass({ name: 'test', baseMs: 100, maxMs: 10_000, pass: script.pass, logger });
    loop.start();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(loop.waitMs).toBe(10_000);
    const before = script.startedAt.length;
    await vi.advanceTimersByTimeAsync(1234);
    loop.nudge();
    await vi.advanceTimersByTimeAsync(0);
    expect(script.startedAt.length).toBe(before + 1);
    expect(script.startedAt.at(-1)).toBe(Date.now());
    // The pass after a nudge waits the base interval even when it found nothing (the work may not be committed yet).
    const nudgedAt = Date.now();
    await vi.advanceTimersByTimeAsync(100);
    expect(script.startedAt.at(-1)).toBe(nudgedAt + 100);
    // Then the backing off starts again from the base.
    await vi.advanceTimersByTimeAsync(200);
    expect(script.startedAt.at(-1)).toBe(nudgedAt + 300);
    await loop.stop();
  });

  it('a nudge during a pass runs another right after it, never two at once', async () => {
    const script = scripted();
    const loop = new PeriodicPass({ name: 'test', baseMs: 100, maxMs: 10_000, pass: script.pass, logger });
    script.holdNext();
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(loop.running).toBe(true);
    loop.nudge();
    loop.nudge();
    await vi.advanceTimersByTimeAsync(500);
    expect(script.startedAt).toHaveLength(1);
    script.releaseHeld();
    await vi.advanceTimersByTimeAsync(0);
    expect(script.startedAt).toHaveLength(2);
    expect(script.startedAt[1]).toBe(Date.now());
    expect(script.maxInFlight()).toBe(1);
    await loop.stop();
  });

  it('logs a failing pass and backs off after it', async () => {
    const script = scripted([new Error('database is down'), new Error('database is down'), true]);
    const loop = new PeriodicPass({ name: 'test loop', baseMs: 100, maxMs: 1000, pass: script.pass, logger });
    loop.start();
    await vi.advanceTimersByTimeAsync(700);
    expect(gapsOf(script.startedAt).slice(0, 2)).toEqual([200, 400]);
    expect(lines.filter((line) => line.startsWith('test loop: a pass failed'))).toHaveLength(2);
    await loop.stop();
  });

  it('stop waits for the running pass and no pass starts after it, nudged or timed', async () => {
    const script = scripted();
    const loop = new PeriodicPass({ name: 'test', baseMs: 100, pass: script.pass, logger });
    script.holdNext();
    loop.start();
    await vi.advanceTimersByTimeAsync(0);
    let stopped = false;
    const stopping = loop.stop().then(() => { stopped = true; });
    await vi.advanceTimersByTimeAsync(1000);
    expect(stopped).toBe(false);
    script.releaseHeld();
    await stopping;
    loop.nudge();
    await vi.advanceTimersByTimeAsync(100_000);
    expect(script.startedAt).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('work signals reach every listener of their kind until it unsubscribes', () => {
    let batches = 0;
    let webhooks = 0;
    const offBatches = onWork('batches', () => { batches += 1; });
    const offWebhooks = onWork('webhooks', () => { webhooks += 1; });
    signalWork('batches');
    signalWork('batches');
    signalWork('webhooks');
    offBatches();
    signalWork('batches');
    offWebhooks();
    expect([batches, webhooks]).toEqual([2, 1]);
  });
});

describe('PeriodicPass.soon', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 2_000_000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('brings a backed-off wait back to the base interval without running a pass at once', async () => {
    const script = scripted();
    const loop = new PeriodicPass({ name: 'test', baseMs: 100, maxMs: 10_000, pass: script.pass, logger: silentLogger });
    loop.start();
    await vi.advanceTimersByTimeAsync(30_000);
    const before = script.startedAt.length;
    const at = Date.now();
    loop.soon();
    loop.soon();
    await vi.advanceTimersByTimeAsync(99);
    expect(script.startedAt).toHaveLength(before);
    await vi.advanceTimersByTimeAsync(1);
    expect(script.startedAt).toHaveLength(before + 1);
    expect(script.startedAt.at(-1)).toBe(at + 100);
    await loop.stop();
  });

  it('soon during a pass keeps the base wait after it, even when the pass found nothing', async () => {
    const script = scripted();
    const loop = new PeriodicPass({ name: 'test', baseMs: 100, maxMs: 10_000, pass: script.pass, logger: silentLogger });
    loop.start();
    await vi.advanceTimersByTimeAsync(30_000);
    expect(loop.waitMs).toBe(10_000);
    const before = script.startedAt.length;
    script.holdNext();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(script.startedAt).toHaveLength(before + 1);
    loop.soon();
    script.releaseHeld();
    const releasedAt = Date.now();
    await vi.advanceTimersByTimeAsync(100);
    expect(script.startedAt).toHaveLength(before + 2);
    expect(script.startedAt.at(-1)).toBe(releasedAt + 100);
    await loop.stop();
  });
});
