/**
 * Deny lists: words (case-insensitive, whole words only) and regular expressions. Patterns are checked when they
 * are configured, never on the request path: bounded length, no back-references, no unbounded or nested
 * quantifiers — the shapes behind catastrophic backtracking — so every match has a bounded length too.
 */
import type { Detector, Span } from './detectors.js';

export const MAX_PATTERN_LENGTH = 200;
export const MAX_WORD_LENGTH = 100;
/** A pattern's matches longer than this are not counted (and a stream holds back at most this much for it). */
export const DEFAULT_MAX_MATCH_CHARS = 200;

/** Why a pattern is refused, or undefined when it is accepted. */
export function patternProblem(pattern: string): string | undefined {
  if (pattern.length === 0) return 'is empty';
  if (pattern.length > MAX_PATTERN_LENGTH) return `is longer than ${MAX_PATTERN_LENGTH} characters`;
  try {
    new RegExp(pattern, 'iu');
  } catch (err) {
    return `is not a valid regular expression (${err instanceof Error ? err.message : String(err)})`;
  }
  if (/\\[1-9]|\\k</.test(pattern)) return 'uses a back-reference';
  // walk the pattern: unbounded quantifiers, and quantified groups that contain a quantifier
  const groups: { quantified: boolean }[] = [];
  const groupHasQuantifier: boolean[] = [];
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') {
      i++;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      continue;
    }
    if (c === '[') {
      inClass = true;
      continue;
    }
    if (c === '(') {
      groups.push({ quantified: false });
      groupHasQuantifier.push(false);
      continue;
    }
    const quantifier = quantifierAt(pattern, i);
    if (c === ')') {
      groups.pop();
      const inner = groupHasQuantifier.pop() ?? false;
      const next = quantifierAt(pattern, i + 1);
      if (next && inner) return 'nests a quantifier inside a quantified group';
      if (next && groupHasQuantifier.length > 0) groupHasQuantifier[groupHasQuantifier.length - 1] = true;
      if (inner && groupHasQuantifier.length > 0) groupHasQuantifier[groupHasQuantifier.length - 1] = true;
      continue;
    }
    if (quantifier) {
      if (quantifier.unbounded) return 'uses an unbounded quantifier (*, + or {n,}); write a bound such as {1,50}';
      if (groupHasQuantifier.length > 0) groupHasQuantifier[groupHasQuantifier.length - 1] = true;
      i += quantifier.length - 1;
    }
  }
  return undefined;
}

function quantifierAt(pattern: string, i: number): { unbounded: boolean; length: number } | undefined {
  const c = pattern[i];
  if (c === '*' || c === '+') return { unbounded: true, length: 1 };
  if (c === '?') return pattern[i - 1] === '(' ? undefined : { unbounded: false, length: 1 };
  if (c === '{') {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(i));
    if (!m) return undefined;
    return { unbounded: m[2] !== undefined && m[3] === '', length: m[0].length };
  }
  return undefined;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export interface DenyListOptions {
  words?: readonly string[];
  patterns?: readonly string[];
  maxMatchChars?: number;
}

/** A detector of the listed words and patterns (kind `deny_list`). Patterns must have passed `patternProblem`. */
export function denyListDetector(options: DenyListOptions): Detector {
  const words = (options.words ?? []).map((w) => w.trim()).filter((w) => w.length > 0);
  const maxMatch = options.maxMatchChars ?? DEFAULT_MAX_MATCH_CHARS;
  const expressions: RegExp[] = [];
  if (words.length > 0) {
    // longest first, so "credit card" wins over "credit"; \p{L}\p{N} are word characters in every script
    const alternatives = [...words].sort((a, b) => b.length - a.length).map(escapeRegExp).join('|');
    expressions.push(new RegExp(`(?<![\\p{L}\\p{N}_])(?:${alternatives})(?![\\p{L}\\p{N}_])`, 'giu'));
  }
  for (const pattern of options.patterns ?? []) {
    const problem = patternProblem(pattern);
    if (problem) throw new Error(`deny-list pattern ${problem}`);
    expressions.push(new RegExp(pattern, 'giu'));
  }
  const maxWord = words.reduce((max, w) => Math.max(max, w.length), 0);
  return {
    kind: 'deny_list',
    maxLength: Math.max(maxWord, options.patterns?.length ? maxMatch : 0),
    find(text, from = 0) {
      const spans: Span[] = [];
      for (const pattern of expressions) {
        const re = new RegExp(pattern.source, pattern.flags);
        re.lastIndex = from;
        for (let m = re.exec(text); m !== null; m = re.exec(text)) {
          if (m[0].length === 0) {
            re.lastIndex++;
            continue;
          }
          if (m[0].length <= maxMatch) spans.push({ start: m.index, end: m.index + m[0].length, kind: 'deny_list' });
        }
      }
      return spans.sort((a, b) => a.start - b.start);
    },
  };
}
