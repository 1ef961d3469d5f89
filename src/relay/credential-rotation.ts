import type { Logger } from '../shared/logger.js';
import type { Channel } from '../storage/records.js';

/**
 * Round-robin over a channel's upstream keys. A key the upstream rejects (401/403) leaves the rotation in this
 * process and is reported for the admin; when every key was rejected, all are tried again rather than none.
 */
export class CredentialRotation {
  readonly #cursor = new Map<string, number>();
  readonly #rejected = new Map<string, Set<string>>();

  constructor(private readonly logger: Logger) {}

  next(channel: Channel): string {
    const keys = channel.apiKeys;
    if (keys.length <= 1) return keys[0] ?? '';
    const rejected = this.#rejected.get(channel.id);
    const usable = rejected === undefined ? keys : keys.filter((key) => !rejected.has(key));
    const pool = usable.length > 0 ? usable : keys;
    const cursor = this.#cursor.get(channel.id) ?? 0;
    this.#cursor.set(channel.id, cursor + 1);
    return pool[cursor % pool.length] as string;
  }

  reportRejected(channel: Channel, key: string): void {
    let rejected = this.#rejected.get(channel.id);
    if (rejected === undefined) this.#rejected.set(channel.id, (rejected = new Set()));
    if (rejected.has(key)) return;
    rejected.add(key);
    this.logger.warn('upstream rejected a channel key; it leaves the rotation until the channel is updated', {
      channelId: channel.id,
      channel: channel.name,
      keyIndex: channel.apiKeys.indexOf(key),
    });
  }

  /** After an admin changes a channel, its keys start clean. */
  forgetChannel(channelId: string): void {
    this.#rejected.delete(channelId);
    this.#cursor.delete(channelId);
  }

  rejectedCount(channelId: string): number {
    return this.#rejected.get(channelId)?.size ?? 0;
  }
}
