import { setImmediate as nextTurn } from 'node:timers/promises';

/** How long a long computation may hold the event loop before it lets other work run. */
const MILLISECONDS_PER_TURN = 4;

/**
 * Splits a long synchronous loop into turns of the event loop of a few milliseconds each; the loop calls
 * `maybeYield()` every so many steps (often enough to keep a turn short, rarely enough that reading the clock costs
 * nothing), or asks `due()` at every step and awaits `maybeYield()` only when it says so (no promise per step).
 */
export class TurnBudget {
  private turnEnds = performance.now() + MILLISECONDS_PER_TURN;

  /** The turn's time is spent: the loop should await `maybeYield()` now. */
  due(): boolean {
    return performance.now() >= this.turnEnds;
  }

  async maybeYield(): Promise<void> {
    if (performance.now() < this.turnEnds) return;
    await nextTurn();
    this.turnEnds = performance.now() + MILLISECONDS_PER_TURN;
  }
}
