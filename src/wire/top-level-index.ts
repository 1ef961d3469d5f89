import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, isWhitespace, OPEN_BRACE, OPEN_BRACKET, pastString, QUOTE, skipWhitespace } from './json-bytes.js';
import { MAX_JSON_DEPTH } from './json-depth.js';
import type { JsonSpan } from './json-top-level.js';
import type { KeptLookup, KeptValue } from './kept-members.js';

/**
 * A request body's top-level members as its bytes write them, and whether it nests too deep, from one pass over the
 * bytes (`topLevelIndex`). The gateway reads a caller's body once this way and asks it whatever the bytes must
 * answer (how deep they nest, whether a name is written twice, where the model's value stands, how long the tools
 * are) instead of walking them again per question or writing the parsed body back to text.
 */
export interface TopLevelIndex {
  /** Whether objects and arrays nest deeper than `MAX_JSON_DEPTH` (the pass stops there: `members` is then null). */
  readonly tooDeep: boolean;
  /**
   * The span of each top-level member's value by name (the last one written, as `JSON.parse` keeps it), or null when
   * this reading cannot be sure: the body is not an object whose brackets balance with nothing after it, or a
   * member name holds an escape (it could spell another name).
   */
  readonly members: ReadonlyMap<string, JsonSpan> | null;
  /** How many member names the object writes at its top level: more than `members` holds when one is written twice. */
  readonly written: number;
  /**
   * The members whose value's bytes matched a value kept parsed (`KeptMembers`), by name: the pass stepped over
   * them. Null when none did, or `members` is null.
   */
  readonly reused: ReadonlyMap<string, KeptValue> | null;
}

/** Bytes the pass stops at: quotes, brackets and commas. Any other byte (inside no string) is passed over. */
const STOP = new Uint8Array(256);
for (const byte of [QUOTE, OPEN_BRACE, CLOSE_BRACE, OPEN_BRACKET, CLOSE_BRACKET, COMMA]) STOP[byte] = 1;

/** The end of a value whose text runs up to `before` (a comma or the closing brace), its trailing blanks left out. */
function trimmedEnd(body: Buffer, before: number): number {
  let end = before;
  while (end > 0 && isWhitespace(body[end - 1])) end -= 1;
  return end;
}

/** Whether `body[from, to)` holds a backslash (a name's bytes: short, so a loop costs less than a native search). */
function holdsBackslash(body: Buffer, from: number, to: number): boolean {
  for (let index = from; index < to; index += 1) if (body[index] === BACKSLASH) return true;
  return false;
}

const UNSURE = { members: null, written: 0, reused: null } as const;

/**
 * The pass behind `topLevelIndex`. Brackets inside strings are skipped (a string is found whole: `pastString`);
 * bytes of multi-byte UTF-8 characters never look like JSON's ASCII punctuation, so nothing is decoded but the
 * top-level names. Malformed text may get an answer: the index is asked only about bodies `JSON.parse` took.
 *
 * A member's value whose bytes are those of a value in `kept` (a whole JSON value, ending the member) is stepped
 * over: walking it would leave the pass as it found it (back at the top level, the member still open, no name read)
 * except for how deep it went, which the kept value tells. So the answer is the same with or without `kept`.
 */
export function indexTopLevel(body: Buffer, maxDepth: number = MAX_JSON_DEPTH, kept?: KeptLookup): TopLevelIndex {
  const length = body.length;
  let index = skipWhitespace(body, 0);
  let sure = body[index] === OPEN_BRACE;
  const members = new Map<string, JsonSpan>();
  let written = 0;
  let depth = 0;
  /** The top-level member whose value is being read (its end is set at the next top-level comma or the close). */
  let open: JsonSpan | null = null;
  /** Where the top-level object closed, -1 while it is open. */
  let closedAt = -1;
  let reused: Map<string, KeptValue> | null = null;
  for (; index < length; index += 1) {
    const byte = body[index] as number;
    if (STOP[byte] === 0) continue;
    if (byte === QUOTE) {
      const start = index;
      const end = pastString(body, start);
      if (end < 0) return { tooDeep: false, ...UNSURE };
      index = end - 1;
      if (depth !== 1 || !sure || open !== null) continue;
      // A string at the top level with no member open is a member name: its value follows the colon.
      const colon = skipWhitespace(body, end);
      if (body[colon] !== COLON || holdsBackslash(body, start + 1, end - 1)) {
        sure = false;
        continue;
      }
      const name = body.toString('utf8', start + 1, end - 1);
      open = { start: skipWhitespace(body, colon + 1), end: -1 };
      members.set(name, open);
      written += 1;
      index = colon;
      const known = kept?.find(name, body, open.start);
      if (known !== undefined) {
        if (depth + known.depth > maxDepth) return { tooDeep: true, ...UNSURE };
        (reused ??= new Map()).set(name, known);
        index = open.start + known.bytes.length - 1;
      }
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      depth += 1;
      if (depth > maxDepth) return { tooDeep: true, ...UNSURE };
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth -= 1;
      if (depth === 0 && closedAt === -1) {
        closedAt = index;
        if (open !== null) open.end = trimmedEnd(body, index);
        open = null;
      }
    } else if (depth === 1 && open !== null) {
      // A comma at the top level ends the member being read.
      open.end = trimmedEnd(body, index);
      open = null;
    }
  }
  if (!sure || depth !== 0 || closedAt === -1 || skipWhitespace(body, closedAt + 1) !== length) return { tooDeep: false, ...UNSURE };
  return { tooDeep: false, members, written, reused };
}

const INDEXES = new WeakMap<Buffer, TopLevelIndex>();

/**
 * `indexTopLevel(body)`, read once per body: the request's reader and whatever later asks about the same bytes
 * share one pass. The bytes are never changed once read (a rewritten body is a new buffer). `kept`: values the pass
 * may step over (the request's reader gives them; the answer is the same either way).
 */
export function topLevelIndex(body: Buffer, kept?: KeptLookup): TopLevelIndex {
  let index = INDEXES.get(body);
  if (index === undefined) {
    index = indexTopLevel(body, MAX_JSON_DEPTH, kept);
    INDEXES.set(body, index);
  }
  return index;
}

/** Whether each of `names` (the parsed object's own keys) is written exactly once at the top level of the body. */
export function indexedNamesWrittenOnce(index: TopLevelIndex, names: readonly string[]): boolean {
  return index.members !== null && index.written === index.members.size && index.written === names.length;
}

/**
 * The length of the JSON text of the top-level member `name`'s value as the caller wrote it in `bytes` (the body's
 * own bytes, null when the body no longer says what they say), when the index of its top-level members is sure and
 * every name is written once; undefined otherwise.
 */
export function memberJsonBytes(bytes: Buffer | null, name: string): number | undefined {
  if (bytes === null) return undefined;
  const index = topLevelIndex(bytes);
  if (index.members === null || index.written !== index.members.size) return undefined;
  const span = index.members.get(name);
  return span === undefined ? undefined : span.end - span.start;
}
