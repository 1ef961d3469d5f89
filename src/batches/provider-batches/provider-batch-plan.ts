import type { BatchEndpoint, BatchLineInput } from '../../domain/batches.js';
import type { BatchProvider } from '../../domain/provider-batches.js';
import type { Channel } from '../../domain/records.js';
import type { GatewayServices } from '../../services.js';

/** The endpoints each provider's batch API runs, and the channel type that reaches it. */
const PROVIDERS: Partial<Record<BatchProvider, { channelType: string; endpoints: readonly BatchEndpoint[]; oneModel: boolean }>> = {
  // OpenAI's Batch API takes one model per batch.
  openai: { channelType: 'openai', endpoints: ['/v1/chat/completions', '/v1/responses', '/v1/embeddings'], oneModel: true },
};

export interface ProviderBatchPlan {
  provider: BatchProvider;
  channel: Channel;
}

/** Whether the channel's operator lets its batches go to the provider (`provider_batches: false` keeps them here). */
export const channelTakesBatches = (channel: Channel): boolean => channel.enabled && channel.settings.provider_batches !== false;

/**
 * Where a batch goes: to a provider's own batch API when pass-through is on, the endpoint is one that API runs, and
 * every model the lines name is served by one enabled channel of that provider whose operator has not turned it off
 * (the first such channel of the first model's routes); otherwise (mixed providers, several models for OpenAI, a
 * model no such channel serves) null, and the gateway's own queue runs it.
 */
export function planProviderBatch(services: GatewayServices, endpoint: BatchEndpoint, lines: readonly BatchLineInput[]): ProviderBatchPlan | null {
  if (!services.config.batches.providerPassThrough) return null;
  const provider = (Object.keys(PROVIDERS) as BatchProvider[]).find((name) => PROVIDERS[name]?.endpoints.includes(endpoint) === true);
  const spec = provider === undefined ? undefined : PROVIDERS[provider];
  if (provider === undefined || spec === undefined) return null;
  const { channelType, oneModel } = spec;
  const models = new Set(lines.map((line) => (JSON.parse(line.body) as { model: string }).model));
  if (oneModel && models.size !== 1) return null;
  const [first, ...others] = [...models];
  const channel = services.catalog.routes(first as string).find((route) => route.channel.type === channelType && channelTakesBatches(route.channel))?.channel;
  if (channel === undefined) return null;
  for (const model of others) {
    if (!services.catalog.routes(model).some((route) => route.channel.id === channel.id)) return null;
  }
  return { provider, channel };
}

/** The upstream's model name for a public model on the channel (the public name when the channel maps none). */
export function upstreamModelOf(services: GatewayServices, channel: Channel, model: string): string {
  return services.catalog.routes(model).find((route) => route.channel.id === channel.id)?.upstreamModel ?? channel.models[model] ?? model;
}
