import { GEMINI_BATCH_ENDPOINT, MESSAGE_BATCH_ENDPOINT, type Batch, type BatchEndpoint, type BatchLineInput } from '../../domain/batches.js';
import type { BatchProvider } from '../../domain/provider-batches.js';
import type { Channel } from '../../domain/records.js';
import type { GatewayServices } from '../../services.js';
import { signalWork } from '../../shared/work-signals.js';

/** The endpoints each provider's batch API runs, and the channel type that reaches it. */
const PROVIDERS: Partial<Record<BatchProvider, { channelType: string; endpoints: readonly BatchEndpoint[]; oneModel: boolean }>> = {
  // OpenAI's Batch API takes one model per batch.
  openai: { channelType: 'openai', endpoints: ['/v1/chat/completions', '/v1/responses', '/v1/embeddings'], oneModel: true },
  // A Message Batch's requests each name their model; chat-completions lines go translated (a batch whose lines
  // cannot be expressed as Messages requests falls back to the gateway's queue when it is submitted).
  anthropic: { channelType: 'anthropic', endpoints: [MESSAGE_BATCH_ENDPOINT, '/v1/chat/completions'], oneModel: false },
  // Gemini's batch mode runs one model, the one in its URL.
  gemini: { channelType: 'gemini', endpoints: [GEMINI_BATCH_ENDPOINT], oneModel: true },
};

export interface ProviderBatchPlan {
  provider: BatchProvider;
  channel: Channel;
  /** The line numbers the provider's batch API runs (every line, or the part of a split batch). */
  lines: ReadonlySet<number>;
}

/** Whether the channel's operator lets its batches go to the provider (`provider_batches: false` keeps them here). */
export const channelTakesBatches = (channel: Channel): boolean => channel.enabled && channel.settings.provider_batches !== false;

/**
 * Where a batch goes when pass-through is on. The whole batch goes to a provider's own batch API when the endpoint is
 * one that API runs and every model the lines name is served by one enabled channel of that provider whose operator
 * has not turned it off (the first such channel of the first model's routes). Otherwise (mixed providers, several
 * models for OpenAI, a model no such channel serves) the batch is split: the lines of the first model (in line order)
 * such a channel serves go to that provider's batch API (with the other models that channel serves, where the API
 * takes several models), and the rest run on the gateway's queue, all under the one batch. One provider part per
 * batch: the lines a second provider could take run on the queue. Null when no line can go to a provider.
 */
export function planProviderBatch(services: GatewayServices, endpoint: BatchEndpoint, lines: readonly BatchLineInput[]): ProviderBatchPlan | null {
  if (!services.config.batches.providerPassThrough) return null;
  const modelOf = new Map(lines.map((line) => [line.line, (JSON.parse(line.body) as { model: string }).model]));
  const models = [...new Set(modelOf.values())];
  const linesOf = (served: ReadonlySet<string>): Set<number> => new Set(lines.filter((line) => served.has(modelOf.get(line.line) as string)).map((line) => line.line));
  const providers = (Object.keys(PROVIDERS) as BatchProvider[]).filter((provider) => PROVIDERS[provider]?.endpoints.includes(endpoint) === true);
  for (const provider of providers) {
    const spec = PROVIDERS[provider];
    if (spec === undefined || (spec.oneModel && models.length !== 1)) continue;
    const channel = channelServingAll(services, spec.channelType, models);
    if (channel !== null) return { provider, channel, lines: linesOf(new Set(models)) };
  }
  for (const provider of providers) {
    const spec = PROVIDERS[provider];
    if (spec === undefined) continue;
    for (const model of models) {
      const channel = channelServingAll(services, spec.channelType, [model]);
      if (channel === null) continue;
      const served = spec.oneModel ? [model] : models.filter((other) => services.catalog.routes(other).some((route) => route.channel.id === channel.id));
      return { provider, channel, lines: linesOf(new Set(served)) };
    }
  }
  return null;
}

/** The first enabled channel of `channelType` taking batches, of the first model's routes, that serves every model. */
function channelServingAll(services: GatewayServices, channelType: string, models: readonly string[]): Channel | null {
  const [first, ...others] = models;
  if (first === undefined) return null;
  const channel = services.catalog.routes(first).find((route) => route.channel.type === channelType && channelTakesBatches(route.channel))?.channel;
  if (channel === undefined) return null;
  return others.every((model) => services.catalog.routes(model).some((route) => route.channel.id === channel.id)) ? channel : null;
}

/** The upstream's model name for a public model on the channel (the public name when the channel maps none). */
export function upstreamModelOf(services: GatewayServices, channel: Channel, model: string): string {
  return services.catalog.routes(model).find((route) => route.channel.id === channel.id)?.upstreamModel ?? channel.models[model] ?? model;
}

/**
 * Sends the new batch, or the part of it one provider can take, to that provider's own batch API: its provider batch
 * is recorded in `submit` (before the lines are queued, so the gateway's queue never takes up the lines marked as the
 * provider's), and the provider batch runner submits them. The lines to queue, those of the provider's part marked;
 * nothing is recorded and no line is marked when the gateway's queue runs the whole batch.
 */
export async function recordProviderBatch(services: GatewayServices, batchId: string, endpoint: BatchEndpoint, lines: readonly BatchLineInput[], now: number): Promise<BatchLineInput[]> {
  const plan = planProviderBatch(services, endpoint, lines);
  if (plan === null) return [...lines];
  await services.storage.providerBatches.create({
    batchId, channelId: plan.channel.id, provider: plan.provider, state: 'submit', upstreamFileId: null, upstreamBatchId: null, upstreamStatus: null,
    cancelSent: false, nextAt: now, error: null, submitStartedAt: null,
  });
  return lines.map((line) => (plan.lines.has(line.line) ? { ...line, viaProvider: true } : line));
}

/**
 * A caller's cancel of any batch: a batch a provider runs (wholly or in part) becomes `cancelling` with the provider's
 * lines left open (the provider's answers to lines it ran before the cancel still come, and the cancel is passed on
 * at the next poll) and the queue's lines not started cancelled; any other is cancelled on the gateway's queue. The batch as it now stands (null when it is not the account's).
 */
export async function cancelBatch(services: GatewayServices, accountId: string, batchId: string): Promise<Batch | null> {
  const { storage, clock } = services;
  const provider = await storage.providerBatches.get(batchId);
  if (provider !== null && provider.state !== 'fallback' && provider.state !== 'done') {
    await storage.providerBatches.cancel(accountId, batchId, clock.now());
    signalWork('batches');
    return storage.batches.get(accountId, batchId);
  }
  const cancelled = await storage.batches.cancel(accountId, batchId, clock.now());
  // The runners pass the cancel on and finish the batch now, not at their backed-off idle wait.
  signalWork('batches');
  return cancelled;
}
