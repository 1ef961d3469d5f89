import { createHash } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { Channel, ChannelKeyFlag } from '../domain/records.js';
import type { ChannelKeyFlagRepository } from '../storage/storage.js';

/** A flagged key as the admin sees it: its position and when, never the key. */
export interface RejectedKey {
  index: number;
  reason: string;
  flaggedAt: number;
}

/** Names a key without holding it: the first 16 hex characters of its SHA-256. */
export function keyFingerprint(key: string): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/**
 * Round-robin over a channel's upstream keys. A key the upstream rejects (401/403) leaves the rotation and is
 * flagged for the admin: the flag is stored (so a restart, and every other instance at its next refresh, skips the
 * key too) and shown in GET /admin/channels/:id/health. Updating the channel clears its flags. When every key of a
 * channel is flagged the keys are still used, and the channel's breaker decides how often: a channel is never
 * left with nothing to send.
 */
export class CredentialRotation {
  readonly #cursor = new Map<string, number>();
  /** channel id → fingerprint → flag. */
  #flags = new Map<string, Map<string, ChannelKeyFlag>>();
  /** Flags added here whose write has not been confirmed yet (a refresh must not drop them). */
  readonly #unsaved = new Set<ChannelKeyFlag>();
  /** Channels cleared here while a refresh was reading, so the refresh does not bring their old flags back. */
  readonly #clearedDuringRefresh = new Set<string>();
  /** Channels whose stored flags are being deleted (count of deletes in flight). */
  readonly #clearing = new Map<string, number>();
  #refreshing = false;
  /** Fingerprints of a channel's keys, computed only for channels that have flags. */
  readonly #fingerprints = new WeakMap<Channel, string[]>();

  constructor(
    private readonly logger: Logger,
    private readonly clock: Clock,
    private readonly store: ChannelKeyFlagRepository | null = null,
  ) {}

  next(channel: Channel): string {
    const keys = channel.apiKeys;
    if (keys.length <= 1) return keys[0] ?? '';
    const flags = this.#flags.get(channel.id);
    let pool = keys;
    if (flags !== undefined && flags.size > 0) {
      const fingerprints = this.#fingerprintsOf(channel);
      const usable = keys.filter((_key, index) => !flags.has(fingerprints[index] as string));
      if (usable.length > 0) pool = usable;
    }
    const cursor = this.#cursor.get(channel.id) ?? 0;
    this.#cursor.set(channel.id, cursor + 1);
    return pool[cursor % pool.length] as string;
  }

  /** Whether the channel has a key not flagged yet (worth another try on the same channel). */
  hasUsableKey(channel: Channel): boolean {
    return channel.apiKeys.length > this.rejectedCount(channel);
  }

  /** The upstream rejected `key`: out of the rotation, flagged and stored. */
  reportRejected(channel: Channel, key: string): void {
    const fingerprint = keyFingerprint(key);
    let flags = this.#flags.get(channel.id);
    if (flags === undefined) this.#flags.set(channel.id, (flags = new Map()));
    if (flags.has(fingerprint)) return;
    const flag: ChannelKeyFlag = { channelId: channel.id, keyFingerprint: fingerprint, keyIndex: channel.apiKeys.indexOf(key), reason: 'credential', flaggedAt: this.clock.now() };
    flags.set(fingerprint, flag);
    this.logger.warn('upstream rejected a channel key; it leaves the rotation until the channel is updated', { channelId: channel.id, channel: channel.name, keyIndex: flag.keyIndex });
    if (this.store === null) return;
    this.#unsaved.add(flag);
    this.store.add(flag).then(
      () => this.#unsaved.delete(flag),
      (error: unknown) => {
        this.#unsaved.delete(flag);
        this.logger.warn('could not store a rejected-key flag; it holds in this process only', { channelId: channel.id, ...describeError(error) });
      },
    );
  }

  /** After an admin changes or deletes a channel its keys start clean, here and in storage. */
  forgetChannel(channelId: string): void {
    this.#flags.delete(channelId);
    this.#cursor.delete(channelId);
    for (const flag of this.#unsaved) if (flag.channelId === channelId) this.#unsaved.delete(flag);
    if (this.#refreshing) this.#clearedDuringRefresh.add(channelId);
    if (this.store === null) return;
    this.#clearing.set(channelId, (this.#clearing.get(channelId) ?? 0) + 1);
    this.store
      .clearChannel(channelId)
      .catch((error: unknown) => this.logger.warn('could not clear stored rejected-key flags', { channelId, ...describeError(error) }))
      .finally(() => {
        const left = (this.#clearing.get(channelId) ?? 1) - 1;
        if (left <= 0) this.#clearing.delete(channelId);
        else this.#clearing.set(channelId, left);
      });
  }

  /** Re-reads the stored flags (at start and with every routing snapshot refresh), keeping flags not yet written. */
  async refresh(): Promise<void> {
    if (this.store === null || this.#refreshing) return;
    this.#refreshing = true;
    try {
      const stored = await this.store.listAll();
      const flags = new Map<string, Map<string, ChannelKeyFlag>>();
      const add = (flag: ChannelKeyFlag): void => {
        if (this.#clearedDuringRefresh.has(flag.channelId) || this.#clearing.has(flag.channelId)) return;
        let channelFlags = flags.get(flag.channelId);
        if (channelFlags === undefined) flags.set(flag.channelId, (channelFlags = new Map()));
        if (!channelFlags.has(flag.keyFingerprint)) channelFlags.set(flag.keyFingerprint, flag);
      };
      for (const flag of stored) add(flag);
      for (const flag of this.#unsaved) add(flag);
      this.#flags = flags;
    } finally {
      this.#refreshing = false;
      this.#clearedDuringRefresh.clear();
    }
  }

  /** The channel's flagged keys, by their current index (a flag whose key is no longer there is not shown). */
  rejectedKeys(channel: Channel): RejectedKey[] {
    const flags = this.#flags.get(channel.id);
    if (flags === undefined || flags.size === 0) return [];
    const fingerprints = this.#fingerprintsOf(channel);
    const rejected: RejectedKey[] = [];
    fingerprints.forEach((fingerprint, index) => {
      const flag = flags.get(fingerprint);
      if (flag !== undefined) rejected.push({ index, reason: flag.reason, flaggedAt: flag.flaggedAt });
    });
    return rejected;
  }

  rejectedCount(channel: Channel): number {
    return this.rejectedKeys(channel).length;
  }

  #fingerprintsOf(channel: Channel): string[] {
    let fingerprints = this.#fingerprints.get(channel);
    if (fingerprints === undefined) this.#fingerprints.set(channel, (fingerprints = channel.apiKeys.map(keyFingerprint)));
    return fingerprints;
  }
}
