/**
 * What a translator made of one tool list, by the exact bytes the caller wrote the list in (`toolsSourceOf`): an
 * agent sends the same tools, schemas and all, on every turn, and writing them for another provider (Gemini's
 * schema cleaning, the JSON text of the translated list) cost more than everything else in the request. Bounded in
 * entries and in the size of a list it keeps (a larger list is translated every time); the least recently used entry
 * goes first. Values are frozen and the bytes in them are only ever copied out, never handed on.
 */
interface Entry<T> {
  readonly variant: string;
  /** A copy of the caller's bytes (theirs belong to a request buffer that is released). */
  readonly source: Buffer;
  readonly value: Readonly<T>;
  used: number;
}

export class ToolListCache<T extends object> {
  /** Entries by the length of their bytes: lists of one length are few, and equal bytes are told natively. */
  readonly #byLength = new Map<number, Entry<T>[]>();
  #size = 0;
  #clock = 0;

  constructor(
    private readonly maxEntries: number,
    private readonly maxListBytes: number,
  ) {}

  /**
   * The value for `source` (translated under `variant`, e.g. a channel setting that changes the translation), made
   * by `translate` on a miss. `translate` must depend on nothing but the list the bytes decode to and `variant`.
   */
  get(source: Buffer, variant: string, translate: () => T): Readonly<T> {
    if (source.length > this.maxListBytes) return Object.freeze(translate());
    this.#clock += 1;
    const sameLength = this.#byLength.get(source.length);
    if (sameLength !== undefined) {
      for (const entry of sameLength) {
        if (entry.variant === variant && entry.source.equals(source)) {
          entry.used = this.#clock;
          return entry.value;
        }
      }
    }
    const value = Object.freeze(translate());
    if (this.#size >= this.maxEntries) this.#evictLeastRecent();
    const entry: Entry<T> = { variant, source: Buffer.from(source), value, used: this.#clock };
    const list = this.#byLength.get(source.length);
    if (list === undefined) this.#byLength.set(source.length, [entry]);
    else list.push(entry);
    this.#size += 1;
    return value;
  }

  get size(): number {
    return this.#size;
  }

  #evictLeastRecent(): void {
    let oldest: Entry<T> | undefined;
    for (const list of this.#byLength.values()) for (const entry of list) if (oldest === undefined || entry.used < oldest.used) oldest = entry;
    if (oldest === undefined) return;
    const list = this.#byLength.get(oldest.source.length) ?? [];
    list.splice(list.indexOf(oldest), 1);
    if (list.length === 0) this.#byLength.delete(oldest.source.length);
    this.#size -= 1;
  }
}

/**
 * `body` as JSON text in UTF-8 with `tail` (the UTF-8 of `,"name":value…`, members that follow) and then `end` in
 * place of its closing brace: `end` closes what the tail opened and the object itself (`}` at least). `body` must be
 * a non-empty object.
 */
export function jsonWithTail(body: object, tail: Buffer, end = '}'): Buffer {
  const text = JSON.stringify(body);
  const headBytes = Buffer.byteLength(text) - 1;
  const out = Buffer.allocUnsafe(headBytes + tail.length + Buffer.byteLength(end));
  out.write(text, 0, headBytes);
  tail.copy(out, headBytes);
  out.write(end, headBytes + tail.length);
  return out;
}
