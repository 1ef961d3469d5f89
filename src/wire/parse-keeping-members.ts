import type { KeptLookup } from './kept-members.js';
import { topLevelIndex, type TopLevelIndex } from './top-level-index.js';

/** What stands in the text parsed for a member whose kept value is put in its place after the parse. */
const PLACEHOLDER = '0';

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

/** The body parsed with each reused member's value put in after the parse; null when the parse does not show them. */
function parseAround(bytes: Buffer, spans: readonly { name: string; start: number; end: number }[], reused: ReadonlyMap<string, { value: unknown }>): Record<string, unknown> | null {
  let text = '';
  let from = 0;
  for (const span of spans) {
    text += bytes.toString('utf8', from, span.start) + PLACEHOLDER;
    from = span.end;
  }
  text += bytes.toString('utf8', from);
  const value: unknown = JSON.parse(text);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
  const object = value as Record<string, unknown>;
  for (const span of spans) if (object[span.name] !== 0) return null;
  for (const span of spans) object[span.name] = reused.get(span.name)?.value;
  return object;
}
