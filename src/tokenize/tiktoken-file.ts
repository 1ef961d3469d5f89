import { buildRankTable, type RankTable } from './rank-table.js';
import { TurnBudget } from './turn-budget.js';

const NEWLINE = 0x0a;
const SPACE = 0x20;
const CARRIAGE_RETURN = 0x0d;
const PADDING = 0x3d; // '='
const ZERO = 0x30;
const NOT_BASE64 = -1;
const LINES_BETWEEN_CLOCK_READINGS = 1024;

const BASE64_VALUES = (() => {
  const values = new Int8Array(256).fill(NOT_BASE64);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < alphabet.length; i++) values[alphabet.charCodeAt(i)] = i;
  return values;
})();

/** The shortest line: one byte in base64 without its padding (`IQ`), a space, a one-digit rank and a newline. */
const SHORTEST_LINE = 5;

/**
 * Reads a tiktoken rank file (one token a line: its bytes in base64, a space, its rank) into a rank table. The ranks
 * must run 0, 1, 2, … in line order, as in the files tiktoken publishes; anything else is refused rather than guessed.
 */
export async function parseTiktokenFile(file: Uint8Array): Promise<RankTable> {
  const mostTokens = Math.floor(file.length / SHORTEST_LINE) + 1;
  const bytes = new Uint8Array(Math.ceil((file.length * 3) / 4));
  const starts = new Uint32Array(mostTokens + 1);
  let written = 0;
  let rank = 0;
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`tiktoken rank file: ${what} on line ${rank + 1}`);
  };
  const turn = new TurnBudget();
  while (at < file.length) {
    if (rank % LINES_BETWEEN_CLOCK_READINGS === 0) await turn.maybeYield();
    starts[rank] = written;
    let bits = 0;
    let bitCount = 0;
    for (; at < file.length && file[at] !== SPACE; at++) {
      const char = file[at]!;
      if (char === PADDING) continue;
      const value = BASE64_VALUES[char]!;
      if (value === NOT_BASE64) fail('a character outside base64');
      bits = ((bits << 6) | value) & 0xffffff;
      bitCount += 6;
      if (bitCount >= 8) {
        bitCount -= 8;
        bytes[written++] = (bits >> bitCount) & 0xff;
      }
    }
    if (written === starts[rank]) fail('an empty token');
    if (at === file.length) fail('no rank');
    at++;
    let value = 0;
    let digits = 0;
    for (; at < file.length && file[at] !== NEWLINE && file[at] !== CARRIAGE_RETURN; at++, digits++) {
      const digit = file[at]! - ZERO;
      if (digit < 0 || digit > 9) fail('a rank that is not a number');
      value = value * 10 + digit;
    }
    if (digits === 0 || value !== rank) fail(`rank ${value} out of order`);
    while (at < file.length && (file[at] === NEWLINE || file[at] === CARRIAGE_RETURN)) at++;
    rank++;
  }
  starts[rank] = written;
  return await buildRankTable(bytes.slice(0, written), rank === mostTokens ? starts : starts.slice(0, rank + 1), turn);
}
