import type { KeptLookup } from './kept-members.js';
import { topLevelIndex, type TopLevelIndex } from './top-level-index.js';

/** What stands in the text parsed for a member whose kept value is put in its place after the parse. */
const PLACEHOLDER_BYTE = 0x30; // '0'

/**
 * `JSON.parse` of the body's bytes, where the values of members whose bytes match a value kept parsed (`kept`,
 * found by the pass that indexed the body: `topLevelIndex`) are not parsed again: the text parsed has a placeholder
 * in their place, and the kept value goes there after. The result equals `JSON.parse` of the whole text, member
 * order included, and throws exactly when it would: a kept value's bytes are a whole JSON value ending its member,
 * so the text is valid with them exactly when it is valid with the placeholder. The named members of a body parsed
 * whole are kept for the next body (`KeptMembers.keep`; their values are frozen from then on).
 */
export function parseKeepingMembers(bytes: Buffer, kept: KeptLookup): unknown {
  const index = topLevelIndex(bytes, kept);
  const reusing = reusable(index);
  if (reusing !== null) {
    const value = parseAround(bytes, reusing, index.reused as ReadonlyMap<string, { value: unknown }>);
    if (value !== null) return value;
  }
  const value: unknown = JSON.parse(bytes.toString('utf8'));
  if (index.members !== null && index.written === index.members.size && value !== null && typeof value === 'object') {
    const object = value as Record<string, unknown>;
    for (const [name, span] of index.members) if (index.reused?.has(name) !== true) kept.keep(name, bytes, span, object[name]);
  }
  return value;
}

/**
 * The spans of the members the index stepped over, in the order they are written, when every member name is written
 * once (a name written twice leaves the last for `JSON.parse` to keep: such a body is parsed whole); else null.
 */
function reusable(index: TopLevelIndex): { name: string; start: number; end: number }[] | null {
  if (index.reused === null || index.members === null || index.written !== index.members.size) return null;
  const spans: { name: string; start: number; end: number }[] = [];
  for (const [name, kept] of index.reused) {
    const span = index.members.get(name);
    if (span === undefined || span.end - span.start !== kept.bytes.length) return null;
    spans.push({ name, start: span.start, end: span.end });
  }
  return spans.sort((left, right) => left.start - right.start);
}

/** The text `parseAround` parses, assembled here as bytes so that it is decoded once, as one flat string. */
let scratch = Buffer.allocUnsafe(0);
/** Texts longer than this are assembled in a buffer of their own, so one large body leaves no large scratch behind. */
const SCRATCH_MAX_BYTES = 256 * 1024;

/**
 * The body's bytes with each span's bytes replaced by the placeholder, decoded. A span is a whole JSON value, so its
 * edges are never inside a UTF-8 sequence: decoding the assembled bytes gives the text the parts decoded one by one
 * would join to.
 */
function textAround(bytes: Buffer, spans: readonly { start: number; end: number }[]): string {
  let length = bytes.length;
  for (const span of spans) length -= span.end - span.start - 1;
  if (length > SCRATCH_MAX_BYTES) return assembled(Buffer.allocUnsafe(length), bytes, spans);
  if (scratch.length < length) scratch = Buffer.allocUnsafe(Math.min(Math.max(length, scratch.length * 2), SCRATCH_MAX_BYTES));
  return assembled(scratch, bytes, spans);
}

function assembled(into: Buffer, bytes: Buffer, spans: readonly { start: number; end: number }[]): string {
  let to = 0;
  let from = 0;
  for (const span of spans) {
    to += bytes.copy(into, to, from, span.start);
    into[to] = PLACEHOLDER_BYTE;
    to += 1;
    from = span.end;
  }
  to += bytes.copy(into, to, from);
  return into.toString('utf8', 0, to);
}

/** The body parsed with each reused member's value put in after the parse; null when the parse does not show them. */
function parseAround(bytes: Buffer, spans: readonly { name: string; start: number; end: number }[], reused: ReadonlyMap<string, { value: unknown }>): Record<string, unknown> | null {
  const value: unknown = JSON.parse(textAround(bytes, spans));
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const object = value as Record<string, unknown>;
  for (const span of spans) if (object[span.name] !== 0) return null;
  for (const span of spans) object[span.name] = reused.get(span.name)?.value;
  return object;
}
