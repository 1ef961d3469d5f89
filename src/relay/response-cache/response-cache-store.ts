/** Where cached answers live: in process (LRU) or on Redis when REDIS_URL is set. Failures read as misses. */
export interface ResponseCacheStore {
  /** The stored text, or null (absent, expired, or the backend failed). */
  get(key: string): Promise<string | null>;
  /** Stores `value` for `ttlMs`; a failure is logged, never thrown. */
  set(key: string, value: string, ttlMs: number): Promise<void>;
  close(): Promise<void>;
}

export interface LruBounds {
  maxEntries: number;
  /** Sum of the stored texts' lengths (UTF-16 code units, about bytes for JSON). */
  maxBytes: number;
}

interface Entry {
  value: string;
  expiresAt: number;
}

/** In-process store bounded by entries and size; the least recently used entries leave first, expired ones on sight. */
export class LruResponseCacheStore implements ResponseCacheStore {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  constructor(private readonly bounds: LruBounds, private readonly now: () => number = Date.now) {}

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): Promise<string | null> {
    const entry = this.#entries.get(key);
    if (entry === undefined) return Promise.resolve(null);
    this.#entries.delete(key);
    if (entry.expiresAt <= this.now()) {
      this.#bytes -= entry.value.length;
      return Promise.resolve(null);
    }
    this.#entries.set(key, entry);
    return Promise.resolve(entry.value);
  }

  set(key: string, value: string, ttlMs: number): Promise<void> {
    if (value.length > this.bounds.maxBytes) return Promise.resolve();
    this.#remove(key);
    this.#entries.set(key, { value, expiresAt: this.now() + ttlMs });
    this.#bytes += value.length;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.bounds.maxEntries && this.#bytes <= this.bounds.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= entry.value.length;
    }
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.#entries.clear();
    this.#bytes = 0;
    return Promise.resolve();
  }

  #remove(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.value.length;
  }
}
