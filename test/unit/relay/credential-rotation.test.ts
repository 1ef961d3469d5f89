/** Key rotation: rejected keys leave the rotation, are stored for the admin, survive a restart, clear on update. */
import { describe, expect, it } from 'vitest';
import { CredentialRotation, keyFingerprint } from '../../../src/relay/credential-rotation.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { silentLogger } from '../../../src/shared/logger.js';
import type { ChannelKeyFlag } from '../../../src/domain/records.js';
import type { ChannelKeyFlagRepository } from '../../../src/storage/storage.js';
import { channel, T0 } from '../routing/routing-fixtures.js';

class MemoryFlags implements ChannelKeyFlagRepository {
  flags: ChannelKeyFlag[] = [];
  async listAll(): Promise<ChannelKeyFlag[]> {
    return [...this.flags];
  }
  async add(flag: ChannelKeyFlag): Promise<void> {
    if (!this.flags.some((entry) => entry.channelId === flag.channelId && entry.keyFingerprint === flag.keyFingerprint)) this.flags.push(flag);
  }
  async clearChannel(channelId: string): Promise<void> {
    this.flags = this.flags.filter((flag) => flag.channelId !== channelId);
  }
}

const keys = ['sk-key-zero-0000000000', 'sk-key-one-11111111111', 'sk-key-two-22222222222'];

describe('CredentialRotation', () => {
  it('rotates over the keys and skips a rejected one', () => {
    const rotation = new CredentialRotation(silentLogger, new ManualClock(T0));
    const target = channel('one', { apiKeys: keys });
    expect([0, 1, 2, 3].map(() => rotation.next(target))).toEqual([keys[0], keys[1], keys[2], keys[0]]);
    rotation.reportRejected(target, keys[1]!);
    const used = new Set([0, 1, 2, 3].map(() => rotation.next(target)));
    expect(used).toEqual(new Set([keys[0], keys[2]]));
    expect(rotation.rejectedKeys(target)).toEqual([{ index: 1, reason: 'credential', flaggedAt: T0 }]);
  });

  it('keeps using the keys when every one was rejected (the breaker paces the channel)', () => {
    const rotation = new CredentialRotation(silentLogger, new ManualClock(T0));
    const target = channel('one', { apiKeys: keys.slice(0, 2) });
    for (const key of keys.slice(0, 2)) rotation.reportRejected(target, key);
    expect(rotation.next(target)).toMatch(/^sk-key-/);
    expect(rotation.rejectedCount(target)).toBe(2);
  });

  it('stores the flag by fingerprint (never the key) and a restarted process skips the key', async () => {
    const store = new MemoryFlags();
    const first = new CredentialRotation(silentLogger, new ManualClock(T0), store);
    const target = channel('one', { apiKeys: keys });
    first.reportRejected(target, keys[0]!);
    await Promise.resolve();
    expect(store.flags).toEqual([{ channelId: 'one', keyFingerprint: keyFingerprint(keys[0]!), keyIndex: 0, reason: 'credential', flaggedAt: T0 }]);
    expect(JSON.stringify(store.flags)).not.toContain(keys[0]);
    const second = new CredentialRotation(silentLogger, new ManualClock(T0), store);
    await second.refresh();
    expect(new Set([0, 1, 2, 3].map(() => second.next(target)))).toEqual(new Set([keys[1], keys[2]]));
  });

  it('a refresh keeps a flag whose write has not landed yet', async () => {
    let release: () => void = () => undefined;
    const store = new MemoryFlags();
    const slow: ChannelKeyFlagRepository = {
      listAll: () => store.listAll(),
      add: (flag) => new Promise<void>((resolve) => {
        release = () => void store.add(flag).then(resolve);
      }),
      clearChannel: (channelId) => store.clearChannel(channelId),
    };
    const rotation = new CredentialRotation(silentLogger, new ManualClock(T0), slow);
    const target = channel('one', { apiKeys: keys });
    rotation.reportRejected(target, keys[2]!);
    await rotation.refresh();
    expect(rotation.rejectedCount(target)).toBe(1);
    release();
  });

  it('updating the channel clears its flags, here and in storage', async () => {
    const store = new MemoryFlags();
    const rotation = new CredentialRotation(silentLogger, new ManualClock(T0), store);
    const target = channel('one', { apiKeys: keys });
    rotation.reportRejected(target, keys[0]!);
    await Promise.resolve();
    rotation.forgetChannel('one');
    await rotation.refresh();
    expect(rotation.rejectedKeys(target)).toEqual([]);
    expect(store.flags).toEqual([]);
  });

  it('a flag for a key that was replaced is not shown', () => {
    const rotation = new CredentialRotation(silentLogger, new ManualClock(T0));
    rotation.reportRejected(channel('one', { apiKeys: keys }), keys[0]!);
    expect(rotation.rejectedKeys(channel('one', { apiKeys: ['sk-brand-new-key-33333'] }))).toEqual([]);
  });
});
