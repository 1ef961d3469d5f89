import type { KeptValue } from './kept-members.js';
import { topLevelIndex } from './top-level-index.js';

/** Bytes a needle searched past kept values must not hold: those that may stand next to a member's value. */
const BOUNDARY = /[\s:,}"]/u;

/** Whether each kept value's bytes hold each needle asked about, read once per kept value. */
const HOLDS = new WeakMap<KeptValue, Map<string, boolean>>();

function keptHolds(kept: KeptValue, needle: string): boolean {
  let answers = HOLDS.get(kept);
  if (answers === undefined) {
    answers = new Map();
    HOLDS.set(kept, answers);
  }
  let holds = answers.get(needle);
  if (holds === undefined) {
    holds = kept.bytes.includes(needle);
    answers.set(needle, holds);
  }
  return holds;
}

/**
 * `out.includes(needle)`, where `out` is a caller's body `bytes` as read (`topLevelIndex` with kept values: Claude
 * Code's 14-60 KB of tools, sent again each turn) or those bytes with only the string value of the member `model`
 * replaced: the bytes of the member values the index stepped over are not searched again, since whether a kept
 * value's bytes hold the needle is read once per kept value (a kept value serves one caller's bodies, so this tells
 * no caller anything about another's). A needle that holds no blank, colon, comma, closing brace or quote can start
 * and end only within one member's value or between values, never across the edge of a value: so it stands in the
 * whole exactly when it stands in a part.
 */
export function includesPastKept(out: Buffer, bytes: Buffer, needle: string): boolean {
  if (BOUNDARY.test(needle)) throw new Error('a needle searched past kept values must hold no blank, colon, comma, closing brace or quote');
  const index = topLevelIndex(bytes);
  if (index.reused === null || index.members === null) return out.includes(needle);
  const shift = out.length - bytes.length;
  const model = index.members.get('model');
  if (shift !== 0 && model === undefined) return out.includes(needle);
  const skipped: { start: number; end: number; kept: KeptValue }[] = [];
  for (const [name, kept] of index.reused) {
    const span = index.members.get(name);
    if (span === undefined || span.end - span.start !== kept.bytes.length) return out.includes(needle);
    // Values after the model's are `shift` bytes further on in `out`.
    const moved = model !== undefined && span.start >= model.end ? shift : 0;
    skipped.push({ start: span.start + moved, end: span.end + moved, kept });
  }
  skipped.sort((left, right) => left.start - right.start);
  let from = 0;
  for (const { start, end, kept } of skipped) {
    if (keptHolds(kept, needle)) return true;
    if (start - from >= needle.length && out.subarray(from, start).includes(needle)) return true;
    from = end;
  }
  return out.length - from >= needle.length && out.subarray(from).includes(needle);
}
