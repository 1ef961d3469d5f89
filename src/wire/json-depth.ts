import { CLOSE_BRACE, CLOSE_BRACKET, OPEN_BRACE, OPEN_BRACKET, pastString, QUOTE } from './json-bytes.js';

/**
 * The deepest nesting of objects and arrays (together) a JSON request body may have. Real requests, tool schemas
 * included, stay far below it; far deeper bodies would overflow the stack of every recursive walk after parsing.
 */
export const MAX_JSON_DEPTH = 64;

/**
 * Whether the JSON text nests objects and arrays deeper than `maxDepth`, found in one pass over the raw bytes before
 * parsing: brackets inside strings are skipped. Malformed text is left to JSON.parse to reject.
 */
export function exceedsJsonDepth(text: Buffer, maxDepth: number = MAX_JSON_DEPTH): boolean {
  // Most bodies open fewer objects and arrays than the limit in total: counted with native searches, no walk.
  if (openersAtMost(text, maxDepth)) return false;
  let depth = 0;
  const length = text.length;
  for (let index = 0; index < length; index += 1) {
    const byte = text[index];
    if (byte === QUOTE) {
      const end = pastString(text, index);
      if (end < 0) return false;
      index = end - 1;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth += 1;
      if (depth > maxDepth) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth -= 1;
    }
  }
  return false;
}

/** Whether `{` and `[` occur at most `limit` times together (inside strings too: an upper bound of the depth). */
function openersAtMost(text: Buffer, limit: number): boolean {
  let count = 0;
  for (let at = text.indexOf(OPEN_BRACE); at >= 0; at = text.indexOf(OPEN_BRACE, at + 1)) {
    count += 1;
    if (count > limit) return false;
  }
  for (let at = text.indexOf(OPEN_BRACKET); at >= 0; at = text.indexOf(OPEN_BRACKET, at + 1)) {
    count += 1;
    if (count > limit) return false;
  }
  return true;
}
