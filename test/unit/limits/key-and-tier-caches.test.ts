/**
 * The hot-path caches: KeyVerifier (no storage read per request, refresh ahead, invalidation that a racing load
 * cannot undo, the longer TTL only while invalidations are live) and TierBook (limits from memory, `default` for
 * unknown tiers, reloads on invalidation).
 */
import { describe, expect, it, vi } from 'vitest';
import { issueApiKey } from '../../../src/auth/api-key-format.js';
import { KeyVerifier } from '../../../src/auth/key-verifier.js';
import { LocalInvalidationBus } from '../../../src/invalidation/invalidation-bus.js';
import { TierBook } from '../../../src/limits/tier-book.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { silentLogger } from '../../../src/shared/logger.js';
import type { Account, ApiKey, Tier } from '../../../src/domain/records.js';
import type { Storage } from '../../../src/storage/storage.js';
import { makeAccount, makeApiKey } from '../../storage/fixtures.js';

class LiveBus extends LocalInvalidationBus {
  override get live(): boolean {
    return true;
  }
}

interface FakeStorage {
  storage: Storage;
  reads: () => number;
  key: ApiKey;
  account: Account;
  /** When set, reads wait for it (to race an invalidation). */
  gate: Promise<void> | null;
  tiers: Tier[];
}

function fakeStorage(): FakeStorage & { plaintext: string } {
  const issued = issueApiKey('sk', 'unigate');
  const account = makeAccount();
  const fake = {
    plaintext: issued.plaintext,
    key: makeApiKey(account.id, { secretHash: issued.secretHash }),
    account,
    gate: null as Promise<void> | null,
    tiers: [] as Tier[],
    count: 0,
    storage: null as unknown as Storage,
    reads: () => fake.count,
  };
  fake.storage = {
    keys: {
      getBySecretHash: async (hash: string) => {
        fake.count += 1;
        const snapshot = { ...fake.key };
        if (fake.gate !== null) await fake.gate;
        return hash === snapshot.secretHash ? snapshot : null;
      },
    },
    accounts: { getById: async () => ({ ...fake.account }) },
    tiers: { listAll: async () => fake.tiers.map((tier) => ({ ...tier })) },
  } as unknown as Storage;
  return fake;
}

const OPTIONS = { brand: 'unigate', ttlMs: 1000, liveTtlMs: 30_000, maxEntries: 100 };

describe('KeyVerifier cache', () => {
  it('reads storage once, then serves from memory within the TTL', async () => {
    const fake = fakeStorage();
    const clock = new ManualClock(1_000_000);
    const verifier = new KeyVerifier(fake.storage, clock, OPTIONS);
    const results = await Promise.all(Array.from({ length: 10 }, () => verifier.verify(fake.plaintext)));
    expect(results.every((result) => result.ok)).toBe(true);
    expect(fake.reads()).toBe(1);
    clock.advance(400);
    await verifier.verify(fake.plaintext);
    expect(fake.reads()).toBe(1);
  });

  it('refreshes ahead after half the TTL without making the request wait, and blocks only past the TTL', async () => {
    const fake = fakeStorage();
    const clock = new ManualClock(1_000_000);
    const verifier = new KeyVerifier(fake.storage, clock, OPTIONS);
    await verifier.verify(fake.plaintext);
    fake.key.status = 'disabled';
    clock.advance(600);
    // Served from the cache (still enabled) while the refresh runs.
    expect(await verifier.verify(fake.plaintext)).toMatchObject({ ok: true });
    expect(fake.reads()).toBe(2);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(await verifier.verify(fake.plaintext)).toEqual({ ok: false, reason: 'disabled' });
    fake.key.status = 'revoked';
    clock.advance(1000);
    expect(await verifier.verify(fake.plaintext)).toEqual({ ok: false, reason: 'revoked' });
  });

  it('drops a key on invalidation, and a load that raced the invalidation does not put stale data back', async () => {
    const fake = fakeStorage();
    const clock = new ManualClock(1_000_000);
    const bus = new LocalInvalidationBus();
    const verifier = new KeyVerifier(fake.storage, clock, OPTIONS, bus);
    let open = (): void => undefined;
    fake.gate = new Promise((resolve) => {
      open = resolve;
    });
    const racing = verifier.verify(fake.plaintext);
    await new Promise((resolve) => setTimeout(resolve, 0));
    // The load read the key as enabled; now it is revoked and the change announced before the load finishes.
    fake.key.status = 'revoked';
    verifier.invalidateKey(fake.key.id);
    fake.gate = null;
    open();
    expect(await racing).toMatchObject({ ok: true });
    expect(await verifier.verify(fake.plaintext)).toEqual({ ok: false, reason: 'revoked' });
  });

  it('drops every key of an account on account invalidation, and everything on "all"', async () => {
    const fake = fakeStorage();
    const clock = new ManualClock(1_000_000);
    const bus = new LocalInvalidationBus();
    const verifier = new KeyVerifier(fake.storage, clock, OPTIONS, bus);
    await verifier.verify(fake.plaintext);
    verifier.invalidateAccount(fake.account.id);
    await verifier.verify(fake.plaintext);
    expect(fake.reads()).toBe(2);
    bus.publish({ kind: 'all' });
    await verifier.verify(fake.plaintext);
    expect(fake.reads()).toBe(3);
    bus.publish({ kind: 'key', id: 'key_other' });
    await verifier.verify(fake.plaintext);
    expect(fake.reads()).toBe(3);
  });

  it('answers a cached key in the same turn, and hands over the hash where only storage can answer', async () => {
    const fake = fakeStorage();
    const clock = new ManualClock(1_000_000);
    const verifier = new KeyVerifier(fake.storage, clock, OPTIONS);
    const hash = fake.key.secretHash;
    const beforeLookup = vi.fn(async () => undefined);
    expect(verifier.verifyNow(null)).toEqual({ ok: false, reason: 'missing' });
    expect(verifier.verifyNow('not-a-key')).toEqual({ ok: false, reason: 'malformed' });
    // No entry: the hash, for the lookup, which runs the caller's check first (the lockout).
    expect(verifier.verifyNow(fake.plaintext)).toBe(hash);
    expect(await verifier.verifyHash(hash, beforeLookup)).toMatchObject({ ok: true });
    expect(beforeLookup).toHaveBeenCalledTimes(1);
    expect(verifier.verifyNow(fake.plaintext)).toMatchObject({ ok: true, key: { id: fake.key.id }, account: { id: fake.account.id } });
    expect(fake.reads()).toBe(1);
    // Past half the TTL: still answered in the turn, re-read in the background.
    clock.advance(600);
    expect(verifier.verifyNow(fake.plaintext)).toMatchObject({ ok: true });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(fake.reads()).toBe(2);
    // Expired: the hash again; a key verified here is re-read without the caller's check.
    clock.advance(1000);
    expect(verifier.verifyNow(fake.plaintext)).toBe(hash);
    expect(await verifier.verifyHash(hash, beforeLookup)).toMatchObject({ ok: true });
    expect(beforeLookup).toHaveBeenCalledTimes(1);
    // A revocation drops the entry: the next answer comes from storage, then from the cache, refused in the turn.
    fake.key.status = 'revoked';
    await verifier.invalidateKey(fake.key.id);
    expect(verifier.verifyNow(fake.plaintext)).toBe(hash);
    expect(await verifier.verifyHash(hash, beforeLookup)).toEqual({ ok: false, reason: 'revoked' });
    expect(verifier.verifyNow(fake.plaintext)).toEqual({ ok: false, reason: 'revoked' });
  });

  it('answers a key known to be unknown in the turn, and checks the caller again once that expires', async () => {
    const fake = fakeStorage();
    const clock = new ManualClock(1_000_000);
    const verifier = new KeyVerifier(fake.storage, clock, OPTIONS);
    const other = issueApiKey('sk', 'unigate');
    const beforeLookup = vi.fn(async () => undefined);
    expect(await verifier.verify(other.plaintext, beforeLookup)).toEqual({ ok: false, reason: 'unknown' });
    expect(verifier.verifyNow(other.plaintext)).toEqual({ ok: false, reason: 'unknown' });
    expect(beforeLookup).toHaveBeenCalledTimes(1);
    clock.advance(1000);
    expect(verifier.verifyNow(other.plaintext)).toBe(other.secretHash);
    expect(await verifier.verify(other.plaintext, beforeLookup)).toEqual({ ok: false, reason: 'unknown' });
    expect(beforeLookup).toHaveBeenCalledTimes(2);
  });

  it('keeps entries for the longer TTL only while invalidations are live', async () => {
    const fake = fakeStorage();
    const clock = new ManualClock(1_000_000);
    const verifier = new KeyVerifier(fake.storage, clock, OPTIONS, new LiveBus());
    await verifier.verify(fake.plaintext);
    clock.advance(10_000);
    await verifier.verify(fake.plaintext);
    expect(fake.reads()).toBe(1);
  });
});

describe('TierBook', () => {
  it('answers limits from memory; unknown tiers get the default tier; reloads on a tier invalidation', async () => {
    const fake = fakeStorage();
    fake.tiers = [
      { name: 'default', rpm: 100, tpm: null, signupCreditNano: null, signupCreditDays: null, createdAt: 1, updatedAt: 1 },
      { name: 'pro', rpm: 1000, tpm: 50_000, signupCreditNano: null, signupCreditDays: null, createdAt: 1, updatedAt: 1 },
    ];
    const bus = new LocalInvalidationBus();
    const book = new TierBook(fake.storage, bus, silentLogger, { refreshMs: 60_000, liveRefreshMs: 60_000 });
    await book.start();
    try {
      expect(book.limitsFor('pro')).toEqual({ rpm: 1000, tpm: 50_000 });
      expect(book.limitsFor('unknown')).toEqual({ rpm: 100, tpm: null });
      (fake.tiers[1] as Tier).rpm = 5;
      expect(book.limitsFor('pro').rpm).toBe(1000);
      bus.publish({ kind: 'tier', name: 'pro' });
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(book.limitsFor('pro').rpm).toBe(5);
    } finally {
      book.stop();
    }
  });

  it('is unlimited when not even the default tier exists, and re-reads on its timer', async () => {
    const fake = fakeStorage();
    const book = new TierBook(fake.storage, new LocalInvalidationBus(), silentLogger, { refreshMs: 100, liveRefreshMs: 100 });
    await book.start();
    try {
      expect(book.limitsFor('anything')).toEqual({ rpm: null, tpm: null });
      fake.tiers = [{ name: 'default', rpm: 7, tpm: 8, signupCreditNano: null, signupCreditDays: null, createdAt: 1, updatedAt: 1 }];
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(book.limitsFor('anything')).toEqual({ rpm: 7, tpm: 8 });
    } finally {
      book.stop();
    }
  });
});
