import type { Channel } from '../../../src/domain/records.js';

export const T0 = 1_700_000_000_000;

/** A channel record serving `alpha` and `beta`, for routing tests. */
export function channel(id: string, overrides: Partial<Channel> = {}): Channel {
  return {
    id, name: `name-${id}`, type: 'openai', baseUrl: null, apiKeys: ['sk-a'], models: { alpha: '', beta: '' }, priority: 0, weight: 1,
    enabled: true, headers: {}, settings: {}, createdAt: T0, updatedAt: T0, ...overrides,
  };
}
