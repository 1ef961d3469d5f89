import { CLOSE_BRACE, COMMA, isWhitespace } from './json-bytes.js';
import type { JsonSpan } from './json-top-level.js';

/**
 * A top-level member's value kept parsed, with the exact bytes it was parsed from. The value is frozen all the way
 * down: every request whose bytes match shares it, so nothing may change it (a write throws instead of reaching the
 * next request).
 */
export interface KeptValue {
  /** Whose bodies may reuse it: those of the caller whose body gave it (`KeptMembers.of`). */
  readonly scope: string;
  readonly name: string;
  readonly bytes: Buffer;
  /** How deep the value nests objects and arrays (a string or number: 0; `[{}]`: 2). */
  readonly depth: number;
  readonly value: unknown;
}

export interface KeptMembersLimits {
  /** The most value bytes kept together; the least recently matched values go first. */
  readonly budgetBytes: number;
  /** Values shorter than this are parsed anew each time (a match costs about what parsing them does). */
  readonly minBytes: number;
  /** The most values kept together (each lookup compares the body with the kept values of its member name). */
  readonly maxValues: number;
}

/** Claude Code's tools (14-60 KB) and system prompt (a few KB) for a few dozen sessions of different versions. */
const DEFAULT_LIMITS: KeptMembersLimits = { budgetBytes: 512 * 1024, minBytes: 1024, maxValues: 32 };

/**
 * The kept values one caller's bodies may reuse (`KeptMembers.of`): only those its own earlier bodies gave, so how
 * fast a body is read never tells a caller what another one sent.
 */
export interface KeptLookup {
  /** The kept value of member `name` whose bytes stand in `body` from `start` and end a member there. */
  find(name: string, body: Buffer, start: number): KeptValue | undefined;
  /** Keeps `value`, parsed from `body[span]` as member `name` of a body `JSON.parse` took (`KeptMembers.keep`). */
  keep(name: string, body: Buffer, span: JsonSpan, value: unknown): void;
}

/** Every value kept, in any `KeptMembers`: deeply frozen, and shared by every body whose bytes matched it. */
const KEPT_VALUES = new WeakSet<object>();

/**
 * Whether `value` is a value kept parsed (`KeptMembers`): frozen all the way down and shared, so what is read off it
 * alone may be read once and reused for as long as it lives.
 */
export function isKeptValue(value: unknown): value is object {
  return value !== null && typeof value === 'object' && KEPT_VALUES.has(value);
}

/** Freezes a value `JSON.parse` made (plain objects, arrays and scalars, no cycles) and tells how deep it nests. */
function freezeParsed(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let deepest = 0;
  if (Array.isArray(value)) {
    for (const item of value) deepest = Math.max(deepest, freezeParsed(item));
  } else {
    const object = value as Record<string, unknown>;
    for (const key of Object.keys(object)) deepest = Math.max(deepest, freezeParsed(object[key]));
  }
  Object.freeze(value);
  return deepest + 1;
}

/**
 * The parsed values of the named top-level members of request bodies (an agent's `tools` and `system`, which its
 * client sends again unchanged request after request: Claude Code's 14 KB of tool schemas every turn), by the exact
 * bytes they were parsed from. The pass that indexes a body's top-level members (`indexTopLevel`) asks `find` at the
 * start of each member's value and steps over a value whose bytes match a kept one; the body is then parsed with
 * that member's value left out and the kept value put in its place (`parseKeepingMembers`), so those bytes are
 * neither walked nor parsed again. Bounded by `KeptMembersLimits`; the least recently matched value goes first. A
 * value serves the bodies of the caller (the account) whose body gave it: `of` gives one caller's lookup.
 */
export class KeptMembers {
  readonly #names: ReadonlySet<string>;
  readonly #limits: KeptMembersLimits;
  /** The kept values of each member name, the most recently matched first. */
  readonly #byName = new Map<string, KeptValue[]>();
  /** Every kept value, the least recently matched first. */
  readonly #order = new Set<KeptValue>();
  #bytes = 0;

  constructor(names: readonly string[], limits: KeptMembersLimits = DEFAULT_LIMITS) {
    this.#names = new Set(names);
    this.#limits = limits;
  }

  /** How many values and value bytes are kept. */
  get size(): { values: number; bytes: number } {
    return { values: this.#order.size, bytes: this.#bytes };
  }

  /** The kept values the bodies of `scope` (an account's id) may reuse, and keep for its next bodies. */
  of(scope: string): KeptLookup {
    return {
      find: (name, body, start) => this.find(scope, name, body, start),
      keep: (name, body, span, value) => this.keep(scope, name, body, span, value),
    };
  }

  /**
   * The value kept for `scope` of member `name` whose bytes stand in `body` from `start` and end a member there
   * (blanks, then a comma or the object's closing brace follow them); undefined when none does.
   */
  find(scope: string, name: string, body: Buffer, start: number): KeptValue | undefined {
    const values = this.#byName.get(name);
    if (values === undefined) return undefined;
    for (let at = 0; at < values.length; at += 1) {
      const kept = values[at] as KeptValue;
      if (kept.scope !== scope) continue;
      const end = start + kept.bytes.length;
      if (end > body.length) continue;
      let after = end;
      while (isWhitespace(body[after])) after += 1;
      if (body[after] !== COMMA && body[after] !== CLOSE_BRACE) continue;
      if (body.compare(kept.bytes, 0, kept.bytes.length, start, end) !== 0) continue;
      this.#touch(values, at, kept);
      return kept;
    }
    return undefined;
  }

  /**
   * Keeps `value`, parsed from `body[span]` as member `name` of a body of `scope` that `JSON.parse` took, when the
   * name is one of the kept ones and its size is within the limits; freezes it (the request it came from shares it
   * from then on).
   */
  keep(scope: string, name: string, body: Buffer, span: JsonSpan, value: unknown): void {
    if (!this.#names.has(name)) return;
    const length = span.end - span.start;
    if (length < this.#limits.minBytes || length > this.#limits.budgetBytes / 4) return;
    const values = this.#byName.get(name) ?? [];
    if (values.some((kept) => kept.scope === scope && kept.bytes.length === length && body.compare(kept.bytes, 0, length, span.start, span.end) === 0)) return;
    const depth = freezeParsed(value);
    const kept: KeptValue = { scope, name, bytes: Buffer.from(body.subarray(span.start, span.end)), depth, value };
    if (value !== null && typeof value === 'object') KEPT_VALUES.add(value);
    values.unshift(kept);
    this.#byName.set(name, values);
    this.#order.add(kept);
    this.#bytes += length;
    while (this.#bytes > this.#limits.budgetBytes || this.#order.size > this.#limits.maxValues) this.#drop(this.#order.values().next().value as KeptValue);
  }

  #touch(values: KeptValue[], at: number, kept: KeptValue): void {
    if (at > 0) {
      values.splice(at, 1);
      values.unshift(kept);
    }
    this.#order.delete(kept);
    this.#order.add(kept);
  }

  #drop(kept: KeptValue): void {
    this.#order.delete(kept);
    this.#bytes -= kept.bytes.length;
    const values = this.#byName.get(kept.name) ?? [];
    values.splice(values.indexOf(kept), 1);
    if (values.length === 0) this.#byName.delete(kept.name);
  }
}
