import { CLOSE_BRACE, CLOSE_BRACKET, COLON, lastStringEscaped, OPEN_BRACE, OPEN_BRACKET, pastString, QUOTE, skipWhitespace } from './json-bytes.js';

/** Where an object value sits in the body: `body.subarray(start, end)` is its JSON text. */
export interface JsonSpan {
  start: number;
  end: number;
}

/**
 * The answer of `topLevelObjectMember`: the span of the member's object value; `absent` when the body is a JSON
 * object without that member; `unsure` when this reading cannot tell without parsing the whole body.
 */
export type TopLevelMember = JsonSpan | 'absent' | 'unsure';

/** Whether the string token `body[start, end)` (quotes included) is exactly `"<key>"`. */
function isKey(body: Buffer, start: number, end: number, key: string): boolean {
  if (end - start !== key.length + 2) return false;
  for (let index = 0; index < key.length; index += 1) if (body[start + 1 + index] !== key.charCodeAt(index)) return false;
  return true;
}

/**
 * Finds the object value of `key` among the top-level members of the JSON object in `body` by one pass over its
 * bytes that only tracks strings and nesting, so that the caller parses that value alone rather than the whole body
 * (an answer's usage is a few hundred bytes of an answer of any length). Bytes of multi-byte UTF-8 characters never
 * look like JSON's ASCII punctuation, so no decoding is needed.
 *
 * It answers only what a full parse would: the last member of that name wins, as in `JSON.parse`. It is `unsure`,
 * for the caller to parse the whole body, when the body is not an object whose brackets balance, a top-level
 * member name holds an escape (it could spell the key), or the member's value is not an object. A body that is
 * well bracketed but not valid JSON otherwise can still get an answer where `JSON.parse` would throw; callers use it
 * on upstream answers, whose validity is the upstream's.
 */
export function topLevelObjectMember(body: Buffer, key: string): TopLevelMember {
  // `key` is short ASCII (at most 10 characters): its characters are compared with bytes, and any escaped spelling of
  // it is short enough for `pastString` to see the escape.
  let index = skipWhitespace(body, 0);
  if (body[index] !== OPEN_BRACE) return 'unsure';
  let depth = 0;
  let found: JsonSpan | null = null;
  while (index < body.length) {
    const byte = body[index] as number;
    if (byte === QUOTE) {
      const start = index;
      index = pastString(body, start);
      if (index === -1) return 'unsure';
      if (depth !== 1) continue;
      const after = skipWhitespace(body, index);
      if (body[after] !== COLON) continue;
      // A member name at the top level.
      if (lastStringEscaped()) return 'unsure';
      if (!isKey(body, start, index, key)) continue;
      const valueStart = skipWhitespace(body, after + 1);
      if (body[valueStart] !== OPEN_BRACE) return 'unsure';
      found = { start: valueStart, end: -1 };
      index = valueStart;
      continue;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth += 1;
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth -= 1;
      if (depth < 0) return 'unsure';
      // The member's object closes when the nesting returns to the top-level object's.
      if (depth === 1 && found !== null && found.end === -1) found.end = index + 1;
      if (depth === 0) {
        if (skipWhitespace(body, index + 1) !== body.length) return 'unsure';
        if (found === null) return 'absent';
        return found.end === -1 ? 'unsure' : found;
      }
    }
    index += 1;
  }
  return 'unsure';
}

/**
 * `read(body.<key>)` for a JSON object body, null when the body is not JSON: the member's value is parsed alone when
 * `topLevelObjectMember` finds it, the whole body only when it is unsure.
 */
export function usageOfTopLevelMember<T>(body: Buffer, key: string, read: (raw: unknown) => T | null): T | null {
  const member = topLevelObjectMember(body, key);
  if (member === 'absent') return null;
  try {
    if (member !== 'unsure') return read(JSON.parse(body.toString('utf8', member.start, member.end)));
    const parsed = JSON.parse(body.toString('utf8')) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? read((parsed as Record<string, unknown>)[key]) : null;
  } catch {
    return null;
  }
}

/**
 * How many member names the JSON object in `body` writes at its top level, by one pass over its bytes (as
 * `topLevelObjectMember`); null when the body is not an object whose brackets balance or a top-level name holds an
 * escape (it could spell another name). Set beside the parsed object's own keys it tells whether a name was written
 * twice: `JSON.parse` keeps the last, and an upstream reading the same bytes might keep the first.
 */
export function topLevelMemberCount(body: Buffer): number | null {
  let index = skipWhitespace(body, 0);
  if (body[index] !== OPEN_BRACE) return null;
  let depth = 0;
  let names = 0;
  while (index < body.length) {
    const byte = body[index] as number;
    if (byte === QUOTE) {
      const start = index;
      index = pastString(body, start);
      if (index === -1) return null;
      if (depth !== 1 || body[skipWhitespace(body, index)] !== COLON) continue;
      if (lastStringEscaped()) return null;
      names += 1;
      continue;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth += 1;
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth -= 1;
      if (depth < 0) return null;
      if (depth === 0) return skipWhitespace(body, index + 1) === body.length ? names : null;
    }
    index += 1;
  }
  return null;
}

/** A member name JSON text can spell only as itself when it holds no `\u` escape: no quote, backslash, slash or control character. */
const SPELT_ONE_WAY = /^[^"\\/\u0000-\u001f]*$/;

/** Whether the quoted text `quoted` at `at` in `body` is a member name: the next byte past blanks is a colon. */
function isNameAt(body: Buffer, at: number, quoted: string): boolean {
  return body[skipWhitespace(body, at + quoted.length)] === COLON;
}

/**
 * Whether each of `names` (the parsed object's own keys) is written once among the top-level members of the JSON
 * object in `body`. First by native searches: in a text without `\u` escapes a name that escapes cannot spell is
 * always written as itself, so when it stands as a member name once in the whole body (nested objects included) it
 * is written once at the top level; a name standing more often (nested objects reuse names) is told by
 * `topLevelMemberCount`, a walk over the bytes that costs less than writing the body again.
 */
export function namesWrittenOnce(body: Buffer, names: readonly string[]): boolean {
  if (body.includes('\\u')) return topLevelMemberCount(body) === names.length;
  for (const name of names) {
    if (!SPELT_ONE_WAY.test(name)) return topLevelMemberCount(body) === names.length;
    const quoted = `"${name}"`;
    let seen = 0;
    for (let at = body.indexOf(quoted); at !== -1 && seen < 2; at = body.indexOf(quoted, at + quoted.length)) if (isNameAt(body, at, quoted)) seen += 1;
    if (seen !== 1) return topLevelMemberCount(body) === names.length;
  }
  return true;
}

/**
 * The span (quotes included) of the string value of the member `name`, when it stands as a member name exactly once
 * in the whole JSON text `body` (nested objects included) and the text holds no `\u` escape: in such a text a name
 * escapes cannot spell is always written as itself, and a top-level member of that name the parsed object has is
 * one of its occurrences, so the only one is it. Null when the name stands more than once, the text has a `\u`
 * escape, or the value is not a string: the caller writes the body again.
 */
export function soleStringMemberSpan(body: Buffer, name: string): JsonSpan | null {
  if (!SPELT_ONE_WAY.test(name) || body.includes('\\u')) return null;
  const quoted = `"${name}"`;
  let found = -1;
  for (let at = body.indexOf(quoted); at !== -1; at = body.indexOf(quoted, at + quoted.length)) {
    if (!isNameAt(body, at, quoted)) continue;
    if (found !== -1) return null;
    found = at;
  }
  if (found === -1) return null;
  const start = skipWhitespace(body, skipWhitespace(body, found + quoted.length) + 1);
  if (body[start] !== QUOTE) return null;
  const end = pastString(body, start);
  return end === -1 ? null : { start, end };
}

/**
 * One pass over the top-level members of the JSON object in `body` (as `topLevelMemberCount`): how many member names
 * it writes, and the span (quotes included) of the string value of the member `key`, for what `soleStringMemberSpan`
 * cannot tell (the name stands in nested objects too, or the text has `\u` escapes). Null when the body is not an
 * object whose brackets balance, a top-level name holds an escape (it could spell another), or the member is absent,
 * written twice or not a string.
 */
export function topLevelStringMember(body: Buffer, key: string): { names: number; span: JsonSpan } | null {
  let index = skipWhitespace(body, 0);
  if (body[index] !== OPEN_BRACE) return null;
  let depth = 0;
  let names = 0;
  let found: JsonSpan | null = null;
  while (index < body.length) {
    const byte = body[index] as number;
    if (byte === QUOTE) {
      const start = index;
      index = pastString(body, start);
      if (index === -1) return null;
      if (depth !== 1) continue;
      const after = skipWhitespace(body, index);
      if (body[after] !== COLON) continue;
      // A member name at the top level.
      if (lastStringEscaped()) return null;
      names += 1;
      if (!isKey(body, start, index, key)) continue;
      if (found !== null) return null;
      const valueStart = skipWhitespace(body, after + 1);
      if (body[valueStart] !== QUOTE) return null;
      const valueEnd = pastString(body, valueStart);
      if (valueEnd === -1) return null;
      found = { start: valueStart, end: valueEnd };
      index = valueEnd;
      continue;
    }
    if (byte === OPEN_BRACE || byte === OPEN_BRACKET) depth += 1;
    else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth -= 1;
      if (depth < 0) return null;
      if (depth === 0) return found !== null && skipWhitespace(body, index + 1) === body.length ? { names, span: found } : null;
    }
    index += 1;
  }
  return null;
}
