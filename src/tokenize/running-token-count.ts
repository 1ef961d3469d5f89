import { countInSlices, loadSliceCounter, SLICE_SETTLED_AFTER, sliceEnd } from './count-tokens-locally.js';
import { TurnBudget } from './turn-budget.js';

type CountSlice = (slice: string) => number;

/**
 * The o200k_base token count of a text that grows at its end (a streamed answer as it is delivered), counted once:
 * each slice is counted as soon as what follows can no longer move its end, so `total()` costs only the text added
 * since the last call, never the whole text again. The total equals countTextTokensLocally of the whole text: the
 * slices are cut exactly where it cuts them (a text of one slice is counted whole, as it counts it).
 *
 * The text added since the last call is counted in turns of the event loop of a few milliseconds each, so a
 * checkpoint of an answer that grew by tens of megabytes never holds the loop; pieces added meanwhile wait for the
 * next call, and calls are counted one after another in the order they were made.
 */
export class RunningTokenCount {
  /** Text not read yet: pieces, and lazily read sequences of pieces (a pass-through stream's kept events). */
  #queue: Array<string | Iterable<string>> = [];
  /** The text after the last slice counted: shorter than a settled slice, it may still grow. */
  #carry = '';
  #counted = 0;
  /** The count in progress (calls take turns). */
  #counting: Promise<void> = Promise.resolve();

  add(text: string): void {
    if (text !== '') this.#queue.push(text);
  }

  /** Adds pieces read only when counted (each read is one step of a turn). */
  addEach(texts: Iterable<string>): void {
    this.#queue.push(texts);
  }

  /** Tokens of all the text added before this call. */
  async total(): Promise<number> {
    const queue = this.#queue;
    this.#queue = [];
    const counted = this.#counting.then(async () => {
      let countSlice: CountSlice;
      try {
        countSlice = await loadSliceCounter();
      } catch (error) {
        // The encoder could not be read: the text waits for the next call.
        this.#queue = [...queue, ...this.#queue];
        throw error;
      }
      await this.#countQueue(queue, countSlice);
      // The carry (one slice at most) may still grow: counted now, kept for the next call.
      return this.#counted + (this.#carry === '' ? 0 : countInSlices(this.#carry, countSlice));
    });
    this.#counting = counted.then(() => undefined, () => undefined);
    return counted;
  }

  async #countQueue(queue: ReadonlyArray<string | Iterable<string>>, countSlice: CountSlice): Promise<void> {
    const budget = new TurnBudget();
    for (const entry of queue) {
      if (typeof entry === 'string') {
        await this.#countPiece(entry, countSlice, budget);
        continue;
      }
      for (const piece of entry) {
        if (piece !== '') await this.#countPiece(piece, countSlice, budget);
        else if (budget.due()) await budget.maybeYield();
      }
    }
  }

  /** Appends a piece to the carry and counts every slice whose end is now fixed. */
  async #countPiece(piece: string, countSlice: CountSlice, budget: TurnBudget): Promise<void> {
    const text = this.#carry + piece;
    let start = 0;
    while (text.length - start > SLICE_SETTLED_AFTER) {
      const end = sliceEnd(text, start);
      this.#counted += countSlice(text.slice(start, end));
      start = end;
      // No other count runs meanwhile (calls take turns) and `add` only queues: the carry can wait.
      if (budget.due()) await budget.maybeYield();
    }
    this.#carry = start === 0 ? text : text.slice(start);
    if (budget.due()) await budget.maybeYield();
  }
}
