import { describe, expect, it } from 'vitest';
import { CallerGone, type CallerSignal } from '../../../src/relay/caller-signal.js';

describe('CallerGone', () => {
  it('runs each listener registered at the abort once, with the reason set, and none removed before it', () => {
    const gone = new CallerGone();
    const calls: string[] = [];
    const first = (): void => void calls.push(`first ${String((gone.reason as Error).message)}`);
    const removed = (): void => void calls.push('removed');
    gone.addEventListener('abort', first);
    gone.addEventListener('abort', removed);
    gone.removeEventListener('abort', removed);
    expect(gone.aborted).toBe(false);
    gone.abort(new Error('client disconnected'));
    gone.abort(new Error('again'));
    expect(gone.aborted).toBe(true);
    expect(calls).toEqual(['first client disconnected']);
  });

  it('does not run a listener added after the abort, as an AbortSignal does not', () => {
    const gone = new CallerGone();
    gone.abort('left');
    let called = false;
    gone.addEventListener('abort', () => {
      called = true;
    });
    expect(called).toBe(false);
    expect(gone.reason).toBe('left');
  });

  it('skips a listener that an earlier one removed during the abort, and runs the rest', () => {
    const gone = new CallerGone();
    const calls: number[] = [];
    const second = (): void => void calls.push(2);
    gone.addEventListener('abort', () => {
      calls.push(1);
      gone.removeEventListener('abort', second);
    });
    gone.addEventListener('abort', second);
    gone.addEventListener('abort', () => void calls.push(3));
    gone.abort(null);
    // As EventTarget's dispatch: a listener removed meanwhile is skipped.
    expect(calls).toEqual([1, 3]);
  });

  it('accepts a real AbortSignal where a caller signal is expected', () => {
    const controller = new AbortController();
    const signal: CallerSignal = controller.signal;
    let heard = false;
    signal.addEventListener('abort', () => {
      heard = true;
    }, { once: true });
    controller.abort();
    expect(heard).toBe(true);
  });

  it('behaves as an AbortSignal for the same sequence of calls', () => {
    const real = new AbortController();
    const light = new CallerGone();
    const record = (signal: CallerSignal, abort: (reason: unknown) => void): string[] => {
      const calls: string[] = [];
      const a = (): void => void calls.push('a');
      const b = (): void => void calls.push('b');
      const c = (): void => {
        calls.push('c');
        signal.removeEventListener('abort', a);
      };
      signal.addEventListener('abort', b);
      signal.addEventListener('abort', c);
      signal.addEventListener('abort', a);
      signal.removeEventListener('abort', b);
      abort('gone');
      signal.addEventListener('abort', b);
      calls.push(`aborted ${String(signal.aborted)} ${String(signal.reason)}`);
      return calls;
    };
    expect(record(light, (reason) => light.abort(reason))).toEqual(record(real.signal, (reason) => real.abort(reason)));
  });
});
