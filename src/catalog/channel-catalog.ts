import type { Channel } from '../domain/records.js';
import type { BundledCatalogSource } from '../upstreams/upstream-descriptor.js';
import { UPSTREAMS } from '../upstreams/upstreams.js';

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

/** Each channel type's bundled provider, as its upstream descriptor declares it; `openai-compatible` has none. */
const BUNDLED_PROVIDER_OF_TYPE = new Map<string, ChannelCatalog>(
  UPSTREAMS.flatMap((upstream) => Object.entries<BundledCatalogSource | undefined>(upstream.catalog ?? {})).flatMap(([type, source]) => {
    if (source === undefined) return [];
    const { serves } = source;
    return [[type, { provider: source.provider, serves: serves === undefined ? everything : (id: string) => serves.test(id) }] as const];
  }),
);

export function channelCatalog(channel: Channel): ChannelCatalog | null {
  const named = channel.settings.catalog_provider;
  if (typeof named === 'string' && named !== '') return { provider: named, serves: everything };
  return BUNDLED_PROVIDER_OF_TYPE.get(channel.type) ?? null;
}
