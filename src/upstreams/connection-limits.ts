import type { Channel } from '../domain/records.js';

/** The most connections a channel may set (`settings.max_connections`). */
export const MAX_CONNECTIONS_SETTING = 100_000;

/**
 * Connection limits by upstream origin from the channels' `settings.max_connections` (a positive integer) and
 * `base_url`. Channels on one origin share its connections: the largest of their limits applies. A channel
 * without a base URL uses its provider's address, which keeps the default limit.
 */
export function connectionLimitsByOrigin(channels: readonly Channel[]): Map<string, number> {
  const limits = new Map<string, number>();
  for (const channel of channels) {
    const limit = channel.settings['max_connections'];
    if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_CONNECTIONS_SETTING) continue;
    if (channel.baseUrl === null) continue;
    let origin: string;
    try {
      origin = new URL(channel.baseUrl).origin;
    } catch {
      continue;
    }
    limits.set(origin, Math.max(limits.get(origin) ?? 0, limit));
  }
  return limits;
}
