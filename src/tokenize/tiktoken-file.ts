import { buildRankTable, type RankTable } from './rank-table.js';

const NEWLINE = 0x0a;
const SPACE = 0x20;
const CARRIAGE_RETURN = 0x0d;
const PADDING = 0x3d; // '='
const ZERO = 0x30;
const NOT_BASE64 = -1;

const BASE64_VALUES = (() => {
  const values = new Int8Array(256).fill(NOT_BASE64);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < alphabet.length; i++) values[alphabet.charCodeAt(i)] = i;
  return values;
})();

/** An upper bound on the tokens in a file: its lines. */
function countLines(file: Uint8Array): number {
  let lines = 0;
  for (let i = 0; i < file.length; i++) if (file[i] === NEWLINE) lines++;
  return file.length > 0 && file[file.length - 1] !== NEWLINE ? lines + 1 : lines;
}

/**
 * Reads a tiktoken rank file (one token a line: its bytes in base64, a space, its rank) into a rank table. The ranks
 * must run 0, 1, 2, … in line order, as in the files tiktoken publishes; anything else is refused rather than guessed.
 */
export function parseTiktokenFile(file: Uint8Array): RankTable {
  const tokens = countLines(file);
  const bytes = new Uint8Array(Math.ceil((file.length * 3) / 4));
  const starts = new Uint32Array(tokens + 1);
  let written = 0;
  let rank = 0;
  let at = 0;
  const fail = (what: string): never => {
    throw new Error(`tiktoken rank file: ${what} on line ${rank + 1}`);
  };
  while (at < file.length) {
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
  return buildRankTable(bytes.slice(0, written), rank === tokens ? starts : starts.slice(0, rank + 1));
}
