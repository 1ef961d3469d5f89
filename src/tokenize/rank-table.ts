import { TurnBudget } from './turn-budget.js';

/**
 * A byte-pair vocabulary held in typed arrays: every token's bytes end to end in one buffer, where each starts, and an
 * open-addressing hash table (linear probing) from a byte string to its rank. For o200k_base that is ~4 MiB, where a
 * Map of strings holds ~23 MiB of heap.
 */
export interface RankTable {
  /** all tokens' bytes, token r at `bytes[starts[r] .. starts[r + 1])` */
  readonly bytes: Uint8Array;
  /** one more entry than there are tokens */
  readonly starts: Uint32Array;
  /** a rank, or EMPTY_SLOT; the length is a power of two */
  readonly slots: Int32Array;
}

export const NOT_A_TOKEN = -1;
const EMPTY_SLOT = -1;
const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const TOKENS_BETWEEN_CLOCK_READINGS = 4096;

/** FNV-1a over `bytes[from .. to)`. */
function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let hash = FNV_OFFSET;
  for (let i = from; i < to; i++) hash = Math.imul(hash ^ bytes[i]!, FNV_PRIME);
  return hash >>> 0;
}

/** Slots for this many tokens at a load below one half, so a miss ends after a probe or two. */
function slotCountFor(tokens: number): number {
  let count = 1;
  while (count < tokens * 2) count *= 2;
  return count;
}

/** Indexes tokens whose bytes `bytes` and `starts` already hold (rank r is token r), a few milliseconds a turn. */
export async function buildRankTable(bytes: Uint8Array, starts: Uint32Array, turn = new TurnBudget()): Promise<RankTable> {
  const tokens = starts.length - 1;
  const slots = new Int32Array(slotCountFor(tokens)).fill(EMPTY_SLOT);
  const mask = slots.length - 1;
  for (let rank = 0; rank < tokens; rank++) {
    if (rank % TOKENS_BETWEEN_CLOCK_READINGS === 0) await turn.maybeYield();
    let slot = hashBytes(bytes, starts[rank]!, starts[rank + 1]!) & mask;
    while (slots[slot] !== EMPTY_SLOT) slot = (slot + 1) & mask;
    slots[slot] = rank;
  }
  return { bytes, starts, slots };
}

/** The rank of the token whose bytes are `key[from .. to)`, or NOT_A_TOKEN. */
export function rankOf(table: RankTable, key: Uint8Array, from: number, to: number): number {
  const { bytes, starts, slots } = table;
  const length = to - from;
  const mask = slots.length - 1;
  let slot = hashBytes(key, from, to) & mask;
  for (;;) {
    const rank = slots[slot]!;
    if (rank === EMPTY_SLOT) return NOT_A_TOKEN;
    const start = starts[rank]!;
    if (starts[rank + 1]! - start === length) {
      let i = 0;
      while (i < length && bytes[start + i] === key[from + i]) i++;
      if (i === length) return rank;
    }
    slot = (slot + 1) & mask;
  }
}
