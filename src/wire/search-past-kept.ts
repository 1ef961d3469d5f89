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
  const skipped = skippedIn(out, bytes);
  if (skipped === null) return out.includes(needle);
  let from = 0;
  for (const { start, end, kept } of skipped) {
    if (keptHolds(kept, needle)) return true;
    if (start - from >= needle.length && out.subarray(from, start).includes(needle)) return true;
    from = end;
  }
  return out.length - from >= needle.length && out.subarray(from).includes(needle);
}

interface Skipped {
  readonly start: number;
  readonly end: number;
  readonly kept: KeptValue;
}

/** The spans of `out` holding kept values, in order, as last worked out for `out` (every search of it asks again). */
const SKIPPED = new WeakMap<Buffer, { bytes: Buffer; skipped: readonly Skipped[] | null }>();

function skippedIn(out: Buffer, bytes: Buffer): readonly Skipped[] | null {
  const known = SKIPPED.get(out);
  if (known !== undefined && known.bytes === bytes) return known.skipped;
  const skipped = keptSpans(out, bytes);
  SKIPPED.set(out, { bytes, skipped });
  return skipped;
}

/** Where the kept values of `bytes` stand in `out`, in order; null when `out` is to be searched whole. */
function keptSpans(out: Buffer, bytes: Buffer): Skipped[] | null {
  const index = topLevelIndex(bytes);
  const reused = index.reused;
  const members = index.members;
  if (reused === null || members === null) return null;
  const shift = out.length - bytes.length;
  const model = members.get('model');
  if (shift !== 0 && model === undefined) return null;
  const skipped: Skipped[] = [];
  let whole = false;
  reused.forEach((kept, name) => {
    const span = members.get(name);
    if (span === undefined || span.end - span.start !== kept.bytes.length) {
      whole = true;
      return;
    }
    // Values after the model's are `shift` bytes further on in `out`.
    const moved = model !== undefined && span.start >= model.end ? shift : 0;
    skipped.push({ start: span.start + moved, end: span.end + moved, kept });
  });
  if (whole) return null;
  if (skipped.length > 1) skipped.sort((left, right) => left.start - right.start);
  return skipped;
}
