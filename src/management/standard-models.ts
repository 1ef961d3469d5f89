import type { ChannelType } from '../storage/records.js';
import type { CreateModelInput } from './model-input.js';

/**
 * Models a provider env shortcut (OPENAI_API_KEY, …) brings with it, at the providers' published list prices in
 * USD per million tokens. Operators override any of them through the admin API or gateway.yaml.
 */
export const STANDARD_MODELS: Record<'openai' | 'anthropic' | 'gemini', CreateModelInput[]> = {
  openai: [
    { id: 'gpt-4o', owned_by: 'openai', pricing: { input_per_mtok: 2_500_000_000n, cached_input_per_mtok: 1_250_000_000n, output_per_mtok: 10_000_000_000n } },
    { id: 'gpt-4o-mini', owned_by: 'openai', pricing: { input_per_mtok: 150_000_000n, cached_input_per_mtok: 75_000_000n, output_per_mtok: 600_000_000n } },
    { id: 'gpt-4.1', owned_by: 'openai', pricing: { input_per_mtok: 2_000_000_000n, cached_input_per_mtok: 500_000_000n, output_per_mtok: 8_000_000_000n } },
    { id: 'gpt-4.1-mini', owned_by: 'openai', pricing: { input_per_mtok: 400_000_000n, cached_input_per_mtok: 100_000_000n, output_per_mtok: 1_600_000_000n } },
    { id: 'gpt-4.1-nano', owned_by: 'openai', pricing: { input_per_mtok: 100_000_000n, cached_input_per_mtok: 25_000_000n, output_per_mtok: 400_000_000n } },
    { id: 'o4-mini', owned_by: 'openai', pricing: { input_per_mtok: 1_100_000_000n, cached_input_per_mtok: 275_000_000n, output_per_mtok: 4_400_000_000n } },
  ],
  anthropic: [
    { id: 'claude-sonnet-4-5', owned_by: 'anthropic', pricing: { input_per_mtok: 3_000_000_000n, cached_input_per_mtok: 300_000_000n, output_per_mtok: 15_000_000_000n } },
    { id: 'claude-haiku-4-5', owned_by: 'anthropic', pricing: { input_per_mtok: 1_000_000_000n, cached_input_per_mtok: 100_000_000n, output_per_mtok: 5_000_000_000n } },
    { id: 'claude-opus-4-1', owned_by: 'anthropic', pricing: { input_per_mtok: 15_000_000_000n, cached_input_per_mtok: 1_500_000_000n, output_per_mtok: 75_000_000_000n } },
  ],
  gemini: [
    { id: 'gemini-2.5-pro', owned_by: 'google', pricing: { input_per_mtok: 1_250_000_000n, cached_input_per_mtok: 310_000_000n, output_per_mtok: 10_000_000_000n } },
    { id: 'gemini-2.5-flash', owned_by: 'google', pricing: { input_per_mtok: 300_000_000n, cached_input_per_mtok: 75_000_000n, output_per_mtok: 2_500_000_000n } },
    { id: 'gemini-2.5-flash-lite', owned_by: 'google', pricing: { input_per_mtok: 100_000_000n, cached_input_per_mtok: 25_000_000n, output_per_mtok: 400_000_000n } },
  ],
};

export const SHORTCUT_CHANNEL_TYPES: Record<keyof typeof STANDARD_MODELS, ChannelType> = { openai: 'openai', anthropic: 'anthropic', gemini: 'gemini' };
