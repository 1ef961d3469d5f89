import type { Clock } from '../shared/clock.js';
import type { Account, ApiKey } from '../storage/records.js';
import type { Storage } from '../storage/storage.js';
import { hashApiKey, isWellFormedApiKey } from './api-key-format.js';

export type KeyRefusal = 'missing' | 'malformed' | 'unknown' | 'revoked' | 'expired' | 'disabled';

export type KeyVerification = { ok: true; key: ApiKey; account: Account } | { ok: false; reason: KeyRefusal };

interface CacheEntry {
  key: ApiKey | null;
  account: Account | null;
  fetchedAt: number;
}

export interface KeyVerifierOptions {
  brand: string;
  /** How long a looked-up key (or a miss) is trusted before storage is asked again. */
  ttlMs: number;
  maxEntries: number;
}

/**
 * Verifies API keys by the SHA-256 of the secret, with a small cache so the hot path makes no database round trip
 * per request. Never throws for a bad key: it returns the reason.
 */
export class KeyVerifier {
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inFlight = new Map<string, Promise<CacheEntry>>();

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly options: KeyVerifierOptions,
  ) {}

  async verify(plaintext: string | null): Promise<KeyVerification> {
    if (plaintext === null) return { ok: false, reason: 'missing' };
    if (!isWellFormedApiKey(plaintext, this.options.brand)) return { ok: false, reason: 'malformed' };
    const hash = hashApiKey(plaintext);
    const now = this.clock.now();
    let entry = this.#cache.get(hash);
    if (entry === undefined || now - entry.fetchedAt >= this.options.ttlMs) entry = await this.#load(hash);
    const { key, account } = entry;
    if (key === null || account === null) return { ok: false, reason: 'unknown' };
    if (key.status === 'revoked') return { ok: false, reason: 'revoked' };
    if (key.expiresAt !== null && key.expiresAt <= now) return { ok: false, reason: 'expired' };
    if (key.status === 'disabled') return { ok: false, reason: 'disabled' };
    return { ok: true, key, account };
  }

  /** Drops cached state of one key or of every key of an account, after an admin change. */
  invalidateKey(keyId: string): void {
    for (const [hash, entry] of this.#cache) if (entry.key?.id === keyId) this.#cache.delete(hash);
  }

  invalidateAccount(accountId: string): void {
    for (const [hash, entry] of this.#cache) if (entry.account?.id === accountId) this.#cache.delete(hash);
  }

  #load(hash: string): Promise<CacheEntry> {
    const pending = this.#inFlight.get(hash);
    if (pending !== undefined) return pending;
    const loading = (async () => {
      const key = await this.storage.keys.getBySecretHash(hash);
      const account = key === null ? null : await this.storage.accounts.getById(key.accountId);
      const entry: CacheEntry = { key, account, fetchedAt: this.clock.now() };
      this.#cache.delete(hash);
      this.#cache.set(hash, entry);
      if (this.#cache.size > this.options.maxEntries) {
        const oldest = this.#cache.keys().next().value;
        if (oldest !== undefined) this.#cache.delete(oldest);
      }
      return entry;
    })().finally(() => this.#inFlight.delete(hash));
    this.#inFlight.set(hash, loading);
    return loading;
  }
}
