import { LocalInvalidationBus, type Invalidation, type InvalidationBus } from '../invalidation/invalidation-bus.js';
import type { Clock } from '../shared/clock.js';
import type { Account, ApiKey } from '../domain/records.js';
import type { Storage } from '../storage/storage.js';
import { hashApiKey, isWellFormedApiKey } from './api-key-format.js';
import { IssuedKeySet } from './issued-key-set.js';

export type KeyRefusal = 'missing' | 'malformed' | 'unknown' | 'revoked' | 'expired' | 'disabled' | 'account_disabled';

export type KeyVerification = { ok: true; key: ApiKey; account: Account } | { ok: false; reason: KeyRefusal };

interface CacheEntry {
  key: ApiKey | null;
  account: Account | null;
  fetchedAt: number;
}

/**
 * Why a known key may not be used now (null: it may): the key's own state and its account's, in the order the admin
 * view names them (management/account-input.ts).
 */
export function keyRefusalOf(key: ApiKey, account: Account, now: number): KeyRefusal | null {
  if (key.status === 'revoked' || account.status === 'deleted') return 'revoked';
  if (key.expiresAt !== null && key.expiresAt <= now) return 'expired';
  if (key.status === 'disabled') return 'disabled';
  if (account.status === 'disabled') return 'account_disabled';
  return null;
}

const MISSING: KeyVerification = { ok: false, reason: 'missing' };
const MALFORMED: KeyVerification = { ok: false, reason: 'malformed' };

/** What a cache entry (or a fresh read) says of the key now. */
function verdictOf({ key, account }: CacheEntry, now: number): KeyVerification {
  if (key === null || account === null) return { ok: false, reason: 'unknown' };
  const refusal = keyRefusalOf(key, account, now);
  return refusal === null ? { ok: true, key, account } : { ok: false, reason: refusal };
}

export interface KeyVerifierOptions {
  brand: string;
  /**
   * How long a looked-up key (or a miss) is trusted while changes on other instances are not pushed here: the
   * bound on how late a change made elsewhere takes effect (one second by default).
   */
  ttlMs: number;
  /** The same while invalidations are live (Redis pub/sub connected): only a safety net then. */
  liveTtlMs?: number;
  maxEntries: number;
}

/** New keys made on other instances are read at most every 5 s, from a minute before the previous read. */
const ISSUED_KEY_SET_OPTIONS = { refreshMs: 5000, clockSkewMs: 60_000, pageSize: 10_000 };

/**
 * Verifies API keys by the SHA-256 of the secret, with a cache so the hot path makes no database round trip per
 * request: an entry past half its TTL is served while it is re-read in the background, so a key in steady use
 * never waits on storage. Admin changes drop entries at once on every instance through the invalidation bus.
 * Never throws for a bad key: it returns the reason.
 */
export class KeyVerifier {
  readonly #cache = new Map<string, CacheEntry>();
  readonly #inFlight = new Map<string, Promise<CacheEntry>>();
  /** Moves on every invalidation: a load that started before one must not put its (possibly stale) result back. */
  #generation = 0;
  /** Which hashes may be issued keys, without a lookup (for addresses locked out after wrong keys). */
  readonly issued: IssuedKeySet;

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly options: KeyVerifierOptions,
    private readonly bus: InvalidationBus = new LocalInvalidationBus(),
  ) {
    bus.subscribe((message) => this.#drop(message));
    this.issued = new IssuedKeySet((afterId, limit) => storage.keys.listSecretHashes(afterId, limit), clock, ISSUED_KEY_SET_OPTIONS);
  }

  /**
   * `beforeLookup` runs before storage is asked about a hash this instance holds no key for (never looked up, or
   * looked up and unknown, and due again); it may throw to refuse the request without that lookup. A key this
   * instance has verified is re-read without it.
   */
  async verify(plaintext: string | null, beforeLookup?: (secretHash: string) => Promise<void>): Promise<KeyVerification> {
    const known = this.verifyNow(plaintext);
    return typeof known === 'string' ? this.verifyHash(known, beforeLookup) : known;
  }

  /**
   * `verify` answered in the same turn, from the form of the key or the cache: the verdict, or the secret's hash
   * when only storage can give it (no entry, or an expired one): `verifyHash` then, with that hash.
   */
  verifyNow(plaintext: string | null): KeyVerification | string {
    if (plaintext === null) return MISSING;
    if (!isWellFormedApiKey(plaintext, this.options.brand)) return MALFORMED;
    // Hashed on every request (about a microsecond): a cache keyed by the secret would keep plaintext keys in memory.
    const hash = hashApiKey(plaintext);
    return this.verifyHashNow(hash) ?? hash;
  }

  /**
   * `verify` for a key known by its secret's hash (a live session's key, checked again before each response): from
   * the same cache, so a key in use costs no database round trip and a change made anywhere reaches it as it reaches
   * requests.
   */
  async verifyHash(hash: string, beforeLookup?: (secretHash: string) => Promise<void>): Promise<KeyVerification> {
    const now = this.clock.now();
    const known = this.verifyHashNow(hash, now);
    if (known !== null) return known;
    const cached = this.#cache.get(hash);
    if (beforeLookup !== undefined && (cached === undefined || cached.key === null)) await beforeLookup(hash);
    return verdictOf(await this.#load(hash), now);
  }

  /**
   * The verdict of the cache alone: null when it has no entry for the hash or an expired one (only storage can answer
   * then). An entry past half its TTL is re-read in the background while it still answers.
   */
  verifyHashNow(hash: string, now = this.clock.now()): KeyVerification | null {
    const ttlMs = this.bus.live ? (this.options.liveTtlMs ?? this.options.ttlMs) : this.options.ttlMs;
    const entry = this.#cache.get(hash);
    if (entry === undefined || now - entry.fetchedAt >= ttlMs) return null;
    if (entry.key !== null && now - entry.fetchedAt >= ttlMs / 2 && !this.#inFlight.has(hash)) {
      // Refresh ahead, for keys (an unknown one is read again once its entry expires, through `beforeLookup`): a
      // failure here is retried by the next request (and surfaces once the entry expires).
      this.#load(hash).catch(() => undefined);
    }
    return verdictOf(entry, now);
  }

  /** After an admin change of one key: drops it here and on every other instance. */
  invalidateKey(keyId: string): Promise<void> {
    return this.bus.publish({ kind: 'key', id: keyId });
  }

  /** After an admin change of an account (tier, credit line, …): drops its keys here and on every other instance. */
  invalidateAccount(accountId: string): Promise<void> {
    return this.bus.publish({ kind: 'account', id: accountId });
  }

  #drop(message: Invalidation): void {
    this.#generation += 1;
    this.#inFlight.clear();
    switch (message.kind) {
      case 'key':
        for (const [hash, entry] of this.#cache) if (entry.key?.id === message.id) this.#cache.delete(hash);
        return;
      case 'account':
        for (const [hash, entry] of this.#cache) if (entry.account?.id === message.id) this.#cache.delete(hash);
        return;
      case 'all':
        this.#cache.clear();
        return;
      case 'tier':
      case 'catalog':
      case 'customers':
      case 'guardrails':
        return;
      default: {
        const unknown: never = message;
        throw new Error(`unhandled invalidation ${String(unknown)}`);
      }
    }
  }

  #load(hash: string): Promise<CacheEntry> {
    const pending = this.#inFlight.get(hash);
    if (pending !== undefined) return pending;
    const generation = this.#generation;
    const loading: Promise<CacheEntry> = (async () => {
      const stored = await this.storage.keys.getBySecretHash(hash);
      const account = stored === null ? null : await this.storage.accounts.getById(stored.accountId);
      // The key's project comes with it (admission applies its limits); a project change drops the account's keys.
      const projectId = stored?.projectId ?? null;
      const key = stored === null ? null : { ...stored, project: projectId === null ? null : await this.storage.projects.getById(projectId) };
      const entry: CacheEntry = { key, account, fetchedAt: this.clock.now() };
      if (generation === this.#generation) this.#remember(hash, entry);
      return entry;
    })().finally(() => {
      if (this.#inFlight.get(hash) === loading) this.#inFlight.delete(hash);
    });
    this.#inFlight.set(hash, loading);
    return loading;
  }

  #remember(hash: string, entry: CacheEntry): void {
    this.#cache.delete(hash);
    this.#cache.set(hash, entry);
    if (this.#cache.size > this.options.maxEntries) {
      const oldest = this.#cache.keys().next().value;
      if (oldest !== undefined) this.#cache.delete(oldest);
    }
  }
}
