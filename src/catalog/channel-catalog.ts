import type { Channel, ChannelType } from '../domain/records.js';

/** In a channel's `models`, this entry stands for every model of the bundled catalog the channel's provider serves. */
export const ALL_BUNDLED_MODELS = '*';

export interface ChannelCatalog {
  /** Provider id in the bundled data. */
  provider: string;
  /** Which of the provider's models this channel type serves (the data's `google` also lists Vertex-only models). */
  serves: (modelId: string) => boolean;
}

const everything = (): boolean => true;

/** Providers of the bundled data that channel types serve without further settings. */
export const BUILT_IN_PROVIDERS: readonly string[] = ['openai', 'anthropic', 'google'];

/** Bundled provider of each channel type that has one; an `openai-compatible` channel names it in `settings.catalog_provider`. */
const BUNDLED_PROVIDER_OF_TYPE: Partial<Record<ChannelType, ChannelCatalog>> = {
  openai: { provider: 'openai', serves: everything },
  'azure-openai': { provider: 'openai', serves: everything },
  anthropic: { provider: 'anthropic', serves: everything },
  gemini: { provider: 'google', serves: (id) => /^(gemini|gemma|imagen|veo|learnlm)/.test(id) },
  // Vertex AI serves Google's Gemini models by default; Claude on Vertex is named per model by the operator.
  'vertex-ai': { provider: 'google', serves: (id) => /^gemini/.test(id) },
  bedrock: { provider: 'aws', serves: everything },
  mistral: { provider: 'mistral', serves: everything },
  groq: { provider: 'groq', serves: everything },
  deepseek: { provider: 'deepseek', serves: everything },
  xai: { provider: 'x-ai', serves: everything },
  openrouter: { provider: 'openrouter', serves: everything },
  together: { provider: 'together', serves: everything },
  fireworks: { provider: 'fireworks', serves: everything },
};

export function channelCatalog(channel: Channel): ChannelCatalog | null {
  const named = channel.settings.catalog_provider;
  if (typeof named === 'string' && named !== '') return { provider: named, serves: everything };
  return BUNDLED_PROVIDER_OF_TYPE[channel.type] ?? null;
}
