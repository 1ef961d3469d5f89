import { ALL_BUNDLED_MODELS } from '../catalog/channel-catalog.js';
import type { GatewayConfig } from '../config/gateway-config.js';
import type { Clock } from '../shared/clock.js';
import type { ChannelType } from '../domain/records.js';
import type { Storage } from '../storage/storage.js';
import { channelFromInput } from './channel-input.js';

const SHORTCUT_CHANNEL_TYPES: Record<'openai' | 'anthropic' | 'gemini', ChannelType> = { openai: 'openai', anthropic: 'anthropic', gemini: 'gemini' };

/**
 * OPENAI_API_KEY, ANTHROPIC_API_KEY and GEMINI_API_KEY (with optional *_BASE_URL) each bring a channel named
 * `env-<provider>` serving every model of that provider in the bundled catalog (`*`), at the bundled prices; an
 * operator's model record of the same id overrides them. Models the operator added to the channel stay.
 */
export async function applyProviderShortcuts(config: GatewayConfig, storage: Storage, clock: Clock): Promise<string[]> {
  const applied: string[] = [];
  const now = clock.now();
  for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
    const shortcut = config.providers[provider];
    if (shortcut === null) continue;
    const name = `env-${provider}`;
    const existing = await storage.channels.getByName(name);
    const modelMap = { [ALL_BUNDLED_MODELS]: '' };
    if (existing === null) {
      await storage.channels.create(channelFromInput({ name, type: SHORTCUT_CHANNEL_TYPES[provider], api_key: shortcut.apiKey, base_url: shortcut.baseUrl, models: modelMap }, now));
    } else {
      await storage.channels.update(existing.id, { apiKeys: [shortcut.apiKey], baseUrl: shortcut.baseUrl, models: { ...existing.models, ...modelMap } }, now);
    }
    applied.push(name);
  }
  return applied;
}
