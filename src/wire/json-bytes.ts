/** JSON's structural bytes. No byte of a multi-byte UTF-8 character equals one of them, so raw bytes can be scanned. */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COLON = 0x3a;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
export const COMMA = 0x2c;

/** Whether the byte is JSON's white space: space, line feed, carriage return or tab (undefined past the end: no). */
export function isWhitespace(byte: number | undefined): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;
}

/** The index of the first byte from `from` on that is not white space (the length when none is). */
export function skipWhitespace(body: Buffer, from: number): number {
  let index = from;
  while (isWhitespace(body[index])) index += 1;
  return index;
}

/** Strings longer than this are searched for their closing quote natively (for short ones the call costs more). */
const SHORT_STRING = 64;

let escapedString = false;

/** Whether the last string `pastString` read held a backslash. */
export function lastStringEscaped(): boolean {
  return escapedString;
}

/** The index just past the string whose opening quote is at `start`, or -1 when it does not end. */
export function pastString(text: Buffer, start: number): number {
  escapedString = false;
  const shortEnd = Math.min(text.length, start + 1 + SHORT_STRING);
  let index = start + 1;
  for (; index < shortEnd; index += 1) {
    const byte = text[index];
    if (byte === QUOTE) return index + 1;
    if (byte === BACKSLASH) {
      escapedString = true;
      index += 1;
    }
  }
  for (;;) {
    const quote = text.indexOf(QUOTE, index);
    if (quote === -1) return -1;
    let backslashes = 0;
    for (let before = quote - 1; before > start && text[before] === BACKSLASH; before -= 1) backslashes += 1;
    if (backslashes > 0) escapedString = true;
    // An even run of backslashes escapes itself, not the quote.
    if (backslashes % 2 === 0) return quote + 1;
    index = quote + 1;
  }
}
