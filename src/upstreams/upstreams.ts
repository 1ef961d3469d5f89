import { anthropicUpstream } from './anthropic/index.js';
import { DEFAULT_CHANNEL_FORM, type ChannelForm } from './channel-form.js';
import { azureOpenAIUpstream } from './azure-openai/index.js';
import { bedrockUpstream } from './bedrock/index.js';
import { cohereUpstream } from './cohere/index.js';
import { geminiUpstream } from './gemini/index.js';
import { jinaUpstream } from './jina/index.js';
import { openAICompatiblePresetsUpstream } from './openai-compatible/index.js';
import { openAIUpstream } from './openai/index.js';
import { simulatorUpstream } from './simulator/index.js';
import { vertexAIUpstream } from './vertex-ai/index.js';
import { voyageUpstream } from './voyage/index.js';

/** Every upstream type the gateway knows, one line each; channel types and their lists derive from here. */
export const UPSTREAMS = [
  openAIUpstream,
  azureOpenAIUpstream,
  anthropicUpstream,
  geminiUpstream,
  bedrockUpstream,
  vertexAIUpstream,
  simulatorUpstream,
  openAICompatiblePresetsUpstream,
  cohereUpstream, jinaUpstream, voyageUpstream,
] as const;

/** The channel types of the registered upstreams (the `channels.type` column holds one of them). */
export type RegisteredChannelType = (typeof UPSTREAMS)[number]['channelTypes'][number];

/** Every channel type, in registry order. */
export const CHANNEL_TYPES: readonly RegisteredChannelType[] = UPSTREAMS.flatMap((upstream): readonly RegisteredChannelType[] => upstream.channelTypes);

/**
 * What a channel of `type` is configured with (credential, base URL, the type's settings), as its descriptor's `form`
 * declares it: the console's channel form shows it and the admin API enforces it from the same entry.
 */
export function channelFormOf(type: string): ChannelForm {
  for (const upstream of UPSTREAMS) {
    if (!(upstream.channelTypes as readonly string[]).includes(type)) continue;
    return (upstream.form as Partial<Record<string, ChannelForm>> | undefined)?.[type] ?? DEFAULT_CHANNEL_FORM;
  }
  return DEFAULT_CHANNEL_FORM;
}
