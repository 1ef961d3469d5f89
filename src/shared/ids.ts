import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 12;

/** CSPRNG bytes drawn 4 KiB at a time: one system call per ~340 ids instead of one per id. */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

/** The random part of the last id, as digits 0-35, and the millisecond it was made for. */
const lastDigits = new Uint8Array(RANDOM_CHARS);
let lastTime = Number.NaN;
/** `lastTime` as the id writes it. */
let lastTimeText = '';

function freshDigits(): void {
  if (poolOffset + RANDOM_CHARS > pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  for (let index = 0; index < RANDOM_CHARS; index += 1) lastDigits[index] = (pool[poolOffset + index] as number) % 36;
  poolOffset += RANDOM_CHARS;
}

/** Adds one to the random part; false when it was all `z` (then the caller draws a fresh one). */
function incrementDigits(): boolean {
  for (let index = RANDOM_CHARS - 1; index >= 0; index -= 1) {
    if ((lastDigits[index] as number) < 35) {
      lastDigits[index] = (lastDigits[index] as number) + 1;
      return true;
    }
    lastDigits[index] = 0;
  }
  return false;
}

/**
 * Time-sortable id: `<prefix>_<10 chars of ms time in base36, zero-padded><12 random base36 chars>`. Ids this
 * process makes for the same millisecond follow one another (the random part of the previous one plus one), so
 * they sort in the order they were made; ids of different processes in one millisecond sort by their random part.
 * Ids are identifiers, never secrets: the next one of a millisecond is guessable from the last.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  if (now !== lastTime || !incrementDigits()) {
    if (now !== lastTime) lastTimeText = now.toString(36).padStart(10, '0');
    lastTime = now;
    freshDigits();
  }
  let random = '';
  for (let index = 0; index < RANDOM_CHARS; index += 1) random += ALPHABET[lastDigits[index] as number];
  return `${prefix}_${lastTimeText}${random}`;
}
