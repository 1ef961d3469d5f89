import type { GatewayConfig } from '../config/gateway-config.js';
import type { Clock } from '../shared/clock.js';
import type { Storage } from '../storage/storage.js';
import { channelFromInput } from './channel-input.js';
import { modelFromInput } from './model-input.js';
import { SHORTCUT_CHANNEL_TYPES, STANDARD_MODELS } from './standard-models.js';

/**
 * OPENAI_API_KEY, ANTHROPIC_API_KEY and GEMINI_API_KEY (with optional *_BASE_URL) each bring a channel named
 * `env-<provider>` serving that provider's standard models. Models that already exist keep the operator's prices.
 */
export async function applyProviderShortcuts(config: GatewayConfig, storage: Storage, clock: Clock): Promise<string[]> {
  const applied: string[] = [];
  const now = clock.now();
  for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
    const shortcut = config.providers[provider];
    if (shortcut === null) continue;
    const models = STANDARD_MODELS[provider];
    for (const model of models) {
      if ((await storage.models.getById(model.id)) === null) await storage.models.create(modelFromInput(model, now));
    }
    const name = `env-${provider}`;
    const existing = await storage.channels.getByName(name);
    const modelMap = Object.fromEntries(models.map((model) => [model.id, '']));
    if (existing === null) {
      await storage.channels.create(channelFromInput({ name, type: SHORTCUT_CHANNEL_TYPES[provider], api_key: shortcut.apiKey, base_url: shortcut.baseUrl, models: modelMap }, now));
    } else {
      await storage.channels.update(existing.id, { apiKeys: [shortcut.apiKey], baseUrl: shortcut.baseUrl, models: { ...existing.models, ...modelMap } }, now);
    }
    applied.push(name);
  }
  return applied;
}
