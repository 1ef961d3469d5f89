import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BatchWriter, type BatchWriterOptions } from '../../../src/shared/batch-writer.js';
import { silentLogger, type Logger } from '../../../src/shared/logger.js';

const options = (overrides: Partial<BatchWriterOptions> = {}): BatchWriterOptions => ({ name: 'test', maxBatch: 3, intervalMs: 100, retryDelayMs: 1, ...overrides });

/** A write function that records batches and can be told to fail or to hold. */
function recorder(failures: boolean[] = []) {
  const batches: number[][] = [];
  const attempts: number[][] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const write = async (items: number[]): Promise<void> => {
    attempts.push([...items]);
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      await Promise.resolve();
      if (failures.shift() === true) throw new Error('database is down');
      batches.push([...items]);
    } finally {
      inFlight -= 1;
    }
  };
  return { write, batches, attempts, written: () => batches.flat(), maxInFlight: () => maxInFlight };
}

describe('BatchWriter timing (fake timers)', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes intervalMs after the first item arrived', async () => {
    vi.useFakeTimers();
    const sink = recorder();
    const writer = new BatchWriter(sink.write, options({ maxBatch: 10, intervalMs: 100 }), silentLogger);
    writer.add(1);
    await vi.advanceTimersByTimeAsync(50);
    writer.add(2);
    await vi.advanceTimersByTimeAsync(49);
    expect(sink.batches).toEqual([]);
    expect(writer.pending).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(sink.batches).toEqual([[1, 2]]);
    expect(writer.pending).toBe(0);
  });

  it('splits a backlog into batches of at most maxBatch, in order, without waiting between full batches', async () => {
    vi.useFakeTimers();
    const sink = recorder();
    const writer = new BatchWriter(sink.write, options({ maxBatch: 3, intervalMs: 100 }), silentLogger);
    for (let item = 1; item <= 7; item += 1) writer.add(item);
    // Full batches go at once, one after the other; the partial one waits one interval.
    await vi.advanceTimersByTimeAsync(1);
    expect(sink.batches).toEqual([[1, 2, 3], [4, 5, 6]]);
    await vi.advanceTimersByTimeAsync(98);
    expect(sink.batches).toEqual([[1, 2, 3], [4, 5, 6]]);
    await vi.advanceTimersByTimeAsync(2);
    expect(sink.batches).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    expect(sink.maxInFlight()).toBe(1);
  });

  it('does nothing without items', async () => {
    vi.useFakeTimers();
    const sink = recorder();
    const writer = new BatchWriter(sink.write, options(), silentLogger);
    await vi.advanceTimersByTimeAsync(1000);
    await writer.flush();
    expect(sink.attempts).toEqual([]);
  });
});

describe('BatchWriter flush, close and retries (real timers)', () => {
  it('flush writes everything now, in batches of at most maxBatch', async () => {
    const sink = recorder();
    const writer = new BatchWriter(sink.write, options({ maxBatch: 3, intervalMs: 60_000 }), silentLogger);
    for (let item = 1; item <= 7; item += 1) writer.add(item);
    expect(writer.pending).toBe(7);
    await writer.flush();
    expect(sink.batches).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    expect(writer.pending).toBe(0);
  });

  it('flush also writes items added while it is writing', async () => {
    let release: () => void = () => {};
    const batches: number[][] = [];
    const writer = new BatchWriter(async (items: number[]) => {
      if (batches.length === 0) await new Promise<void>((resolve) => { release = resolve; });
      batches.push(items);
    }, options({ maxBatch: 10, intervalMs: 60_000 }), silentLogger);
    writer.add(1);
    const flushing = writer.flush();
    await Promise.resolve();
    writer.add(2);
    writer.add(3);
    release();
    await flushing;
    expect(batches.flat()).toEqual([1, 2, 3]);
  });

  it('retries a failed batch until it is written, logging each failure without its message', async () => {
    const sink = recorder([true, true]);
    const errors: Array<{ message: string; fields: Record<string, unknown> | undefined }> = [];
    const logger: Logger = { ...silentLogger, error: (message, fields) => errors.push({ message, fields }) };
    const writer = new BatchWriter(sink.write, options({ maxBatch: 5 }), logger);
    writer.add(1);
    writer.add(2);
    await writer.flush();
    expect(sink.attempts).toEqual([[1, 2], [1, 2], [1, 2]]);
    expect(sink.batches).toEqual([[1, 2]]);
    expect(errors).toHaveLength(2);
    expect(errors[0]?.message).toBe('test: batch write failed, will retry');
    expect(errors[0]?.fields).toMatchObject({ items: 2, errorName: 'Error' });
    expect(JSON.stringify(errors)).not.toContain('database is down');
  });

  it('retries from the timer path too, without a flush', async () => {
    const sink = recorder([true]);
    const writer = new BatchWriter(sink.write, options({ maxBatch: 5, intervalMs: 5 }), silentLogger);
    writer.add(1);
    writer.add(2);
    await vi.waitFor(() => expect(sink.batches).toEqual([[1, 2]]), { timeout: 10_000, interval: 5 });
    expect(sink.attempts).toHaveLength(2);
  });

  it('keeps order when items arrive while a failed batch waits to be retried', async () => {
    const sink = recorder([true]);
    const writer = new BatchWriter(sink.write, options({ maxBatch: 2, intervalMs: 60_000, retryDelayMs: 20 }), silentLogger);
    writer.add(1);
    writer.add(2);
    const flushing = writer.flush();
    await new Promise((resolve) => setTimeout(resolve, 5));
    writer.add(3);
    await flushing;
    expect(sink.written()).toEqual([1, 2, 3]);
  });

  it('close flushes what is queued', async () => {
    const sink = recorder();
    const writer = new BatchWriter(sink.write, options({ maxBatch: 100, intervalMs: 60_000 }), silentLogger);
    writer.add(1);
    writer.add(2);
    await writer.close();
    expect(sink.written()).toEqual([1, 2]);
    expect(writer.pending).toBe(0);
  });

  it('loses and duplicates nothing whatever fails, one write at a time', async () => {
    const step = fc.oneof(
      { weight: 4, arbitrary: fc.constant<'add'>('add') },
      { weight: 1, arbitrary: fc.constant<'wait'>('wait') },
      { weight: 1, arbitrary: fc.constant<'flush'>('flush') },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), fc.array(fc.boolean(), { maxLength: 12 }), fc.integer({ min: 1, max: 4 }),
        async (steps, failures, maxBatch) => {
          const sink = recorder([...failures]);
          const writer = new BatchWriter(sink.write, { name: 'p', maxBatch, intervalMs: 1, retryDelayMs: 1 }, silentLogger);
          const added: number[] = [];
          const flushes: Promise<void>[] = [];
          for (const action of steps) {
            if (action === 'add') {
              added.push(added.length);
              writer.add(added.length - 1);
            } else if (action === 'wait') {
              await new Promise((resolve) => setTimeout(resolve, 2));
            } else {
              flushes.push(writer.flush());
            }
          }
          await writer.close();
          await Promise.all(flushes);
          expect(sink.written()).toEqual(added);
          expect(sink.maxInFlight()).toBe(added.length === 0 ? 0 : 1);
          for (const batch of sink.attempts) expect(batch.length).toBeLessThanOrEqual(maxBatch);
          expect(writer.pending).toBe(0);
        }),
      { numRuns: 40 },
    );
  });
});
