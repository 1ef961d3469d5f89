import type { Usage } from '../ir/usage.js';

/**
 * What an answer costs as its price quotes it: the cost its usage object carries is the cost settled. Handed to the
 * codec's objects that write the answer (whole answers, stream encoders, pass-through observers), which splice it in.
 */
export interface AnswerCost {
  /** The cost of an answer with this usage, in decimal USD. */
  costUsd(usage: Usage): string;
}

/** `body` with `"cost": <costDecimalUsd>` in its usage object (`usageKey`); `body` as it was when it has none. */
export function withUsageCost<T extends Buffer | string>(body: T, costDecimalUsd: string, usageKey: string | null): T | Buffer {
  if (usageKey === null) return body;
  return spliceUsageCost(body, costDecimalUsd, usageKey) ?? body;
}

/**
 * The request's cost inside a body's usage object, as `"cost": <decimal USD>` (the field OpenRouter-style gateways
 * use; the official SDKs keep or ignore unknown usage fields). Spliced into the bytes right after the opening brace of
 * the top-level usage object, so the upstream's body is otherwise passed on untouched and never re-serialised.
 * A quoted key cannot occur inside a JSON string (its quotes would be escaped), and the answer's usage is its last
 * such key (OpenAI, Anthropic and Gemini all write it after the content). Returns null when there is no usage
 * object to put it in. `usageKey` names the answer's usage field (`usage`; Gemini's `usageMetadata`).
 */
export function spliceUsageCost(body: Buffer | string, costDecimalUsd: string, usageKey = 'usage'): Buffer | null {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const key = lastIndexOfKey(bytes, quotedKeyBytes(usageKey));
  if (key < 0) return null;
  let index = key + usageKey.length + 2;
  index = skipWhitespace(bytes, index);
  if (bytes[index] !== 0x3a) return null;
  index = skipWhitespace(bytes, index + 1);
  if (bytes[index] !== 0x7b) return null;
  const closing = skipWhitespace(bytes, index + 1);
  const separator = bytes[closing] === 0x7d ? '' : ',';
  // One buffer of the final size, written in place: the answer is copied once.
  const field = `"cost":${costDecimalUsd}${separator}`;
  const fieldLength = Buffer.byteLength(field);
  const out = Buffer.allocUnsafe(bytes.length + fieldLength);
  bytes.copy(out, 0, 0, index + 1);
  out.write(field, index + 1, 'utf8');
  bytes.copy(out, index + 1 + fieldLength, index + 1);
  return out;
}

/** The bytes of `"<key>"`, made once per key (the few usage keys there are). */
const quotedKeys = new Map<string, Uint8Array>();
function quotedKeyBytes(usageKey: string): Uint8Array {
  let quoted = quotedKeys.get(usageKey);
  if (quoted === undefined) {
    quoted = Buffer.from(`"${usageKey}"`, 'utf8');
    quotedKeys.set(usageKey, quoted);
  }
  return quoted;
}

/**
 * Where `needle` last occurs in `bytes`, or -1: scanned from the end, where an answer's usage is, so a whole answer
 * is rarely read.
 */
function lastIndexOfKey(bytes: Uint8Array, needle: Uint8Array): number {
  const last = needle.length - 1;
  const closing = needle[last] as number;
  for (let end = bytes.length - 1; end >= last; end -= 1) {
    if (bytes[end] !== closing) continue;
    let matched = 1;
    while (matched <= last && bytes[end - matched] === needle[last - matched]) matched += 1;
    if (matched > last) return end - last;
  }
  return -1;
}

function skipWhitespace(bytes: Buffer, from: number): number {
  let index = from;
  while (index < bytes.length && (bytes[index] === 0x20 || bytes[index] === 0x0a || bytes[index] === 0x0d || bytes[index] === 0x09)) index += 1;
  return index;
}
