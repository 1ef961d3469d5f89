import type { Clock } from '../shared/clock.js';

/** One page of the stored keys, in id order (the storage's `listSecretHashes`). */
export type SecretHashPages = (afterId: string | null, limit: number) => Promise<ReadonlyArray<{ id: string; secretHash: string }>>;

export interface IssuedKeySetOptions {
  /** A hash not in the set makes the set re-read new keys when its last read is older than this. */
  refreshMs: number;
  /** How far back a re-read starts before the previous one: keys made on instances whose clocks lag. */
  clockSkewMs: number;
  pageSize: number;
}

/** Key ids are `key_<10 base-36 digits of ms time><random>` (shared/ids.ts): the smallest id of a moment. */
function firstKeyIdAt(time: number): string {
  return `key_${Math.max(0, time).toString(36).padStart(10, '0')}`;
}

/**
 * Which secret hashes belong to an issued key, told apart in memory: for an address locked out after too many wrong
 * keys, where a key this instance has not verified yet is looked up only when it may be an issued one.
 *
 * It keeps the first 30 bits of every key's SHA-256 (a small integer, so a million keys take a few megabytes). A hash
 * of a key never issued is in the set by chance with probability keys / 2^30 (one in a thousand with a million
 * keys), so a guesser gets about one lookup per thousand guesses. Revoked keys stay until the process restarts
 * (their lookup answers 401 as it should). Loaded on first use (every key, page by page), then topped up with the
 * keys made since the last read when a hash is not found and that read is older than `refreshMs`: at most one small
 * read per `refreshMs`, however many guesses arrive.
 */
export class IssuedKeySet {
  readonly #prefixes = new Set<number>();
  #loaded = false;
  #reading: Promise<void> | null = null;
  /** When the last completed read started. */
  #readAt = 0;

  constructor(
    private readonly pages: SecretHashPages,
    private readonly clock: Clock,
    private readonly options: IssuedKeySetOptions,
  ) {}

  /** Whether `secretHash` (hex SHA-256) may be an issued key's; false means it certainly is not. */
  async mayBeIssued(secretHash: string): Promise<boolean> {
    const prefix = prefixOf(secretHash);
    if (this.#loaded && this.#prefixes.has(prefix)) return true;
    if (!this.#loaded || this.clock.now() - this.#readAt >= this.options.refreshMs) await this.#read();
    return this.#prefixes.has(prefix);
  }

  /** A key issued by this process: known at once. */
  add(secretHash: string): void {
    this.#prefixes.add(prefixOf(secretHash));
  }

  #read(): Promise<void> {
    this.#reading ??= this.#readNew().finally(() => {
      this.#reading = null;
    });
    return this.#reading;
  }

  async #readNew(): Promise<void> {
    const startedAt = this.clock.now();
    let after = this.#loaded ? firstKeyIdAt(this.#readAt - this.options.clockSkewMs) : null;
    for (;;) {
      const page = await this.pages(after, this.options.pageSize);
      for (const row of page) this.#prefixes.add(prefixOf(row.secretHash));
      if (page.length < this.options.pageSize) break;
      after = (page.at(-1) as { id: string }).id;
    }
    this.#loaded = true;
    this.#readAt = startedAt;
  }
}

/** The first 30 bits of a hex digest: a small integer V8 keeps unboxed. */
function prefixOf(secretHash: string): number {
  return Number.parseInt(secretHash.slice(0, 8), 16) >>> 2;
}
