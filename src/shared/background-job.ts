import { PeriodicPass, type PeriodicPassOptions } from './periodic-pass.js';
import { onWork, type WorkKind } from './work-signals.js';

export interface BackgroundJobSchedule<Result> extends Omit<PeriodicPassOptions, 'pass'> {
  /** Whether a pass's result means it found work (so more may be waiting and the wait stays at the base interval). */
  found(result: Result): boolean;
  /**
   * Work of this kind signalled in this process wakes the job: `nudge` runs a pass at once, `soon` within the base
   * interval (for signals too frequent to answer each with a pass).
   */
  wakeOn?: { kind: WorkKind; how: 'nudge' | 'soon' };
}

/**
 * A pass over shared state run now and then in the background (on a `PeriodicPass`) and on demand: never two at
 * once, a call while one runs joins it. A pass that throws rejects the calls that joined it; on the schedule the
 * failure is logged and the next pass retries.
 */
export class BackgroundJob<Result> {
  #loop: PeriodicPass | null = null;
  #unsubscribe: (() => void) | null = null;
  #running: Promise<Result> | null = null;

  constructor(private readonly pass: () => Promise<Result>) {}

  /** Starts the schedule (a second call while it runs does nothing). */
  start(schedule: BackgroundJobSchedule<Result>): void {
    if (this.#loop !== null) return;
    const { found, wakeOn, ...options } = schedule;
    const loop = new PeriodicPass({ ...options, pass: async () => found(await this.run()) });
    this.#loop = loop;
    if (wakeOn !== undefined) this.#unsubscribe = onWork(wakeOn.kind, wakeOn.how === 'nudge' ? () => loop.nudge() : () => loop.soon());
    loop.start();
  }

  /** Work may be waiting: a scheduled pass runs now (or right after the running one); nothing while not started. */
  nudge(): void {
    this.#loop?.nudge();
  }

  /** Stops the schedule and waits for a pass in progress. */
  async stop(): Promise<void> {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    await this.#loop?.stop();
    this.#loop = null;
    await this.#running?.catch(() => undefined);
  }

  /** One pass; a call while another runs joins it. */
  run(): Promise<Result> {
    this.#running ??= this.pass().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }
}
