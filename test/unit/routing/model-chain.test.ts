/** modelChain: the chain is decided at once unless the tokenizer must count near the first model's context window. */
import { describe, expect, it, vi } from 'vitest';
import type { CatalogModel } from '../../../src/catalog/catalog-model.js';
import type { ApiKey } from '../../../src/domain/records.js';
import { NO_NEEDS } from '../../../src/ir/request-needs.js';
import { modelChain, type ChainRequest, type ModelChain } from '../../../src/operations/model-chain.js';
import type { RequestMeter } from '../../../src/relay/request-meter.js';
import type { ChannelRoute } from '../../../src/routing/catalog.js';
import type { GatewayServices } from '../../../src/services.js';

function model(id: string, fallbacks: string[] = []): CatalogModel {
  return { id, kind: 'chat', fallbacks, cache: null } as unknown as CatalogModel;
}

function route(name: string, contextWindow: number | null, tools = true): ChannelRoute {
  return { channel: { name, type: 'openai' } as ChannelRoute['channel'], upstreamModel: name, facts: { capabilities: { tools, vision: false, jsonSchema: false, reasoning: false }, contextWindow } };
}

const models: Record<string, CatalogModel> = {
  solo: model('solo'),
  small: model('small', ['large']),
  large: model('large'),
  bare: model('bare', ['large']),
  lonely: model('lonely'),
  blind: model('blind', ['large']),
};
const routes: Record<string, ChannelRoute[]> = {
  solo: [route('solo', 1000)],
  small: [route('small', 1000)],
  large: [route('large', 100_000)],
  blind: [route('blind', 1000, false)],
};

const services = {
  catalog: { model: (name: string) => models[name], routes: (name: string) => routes[name] ?? [] },
  adapters: { get: () => ({ servesChat: true }) },
} as unknown as GatewayServices;

/** A request for `name` whose body is `bodyBytes` long and whose prompt the tokenizer counts as `counted`. */
function ask(name: string, bodyBytes: number, counted: number, tools = false): { request: ChainRequest; count: ReturnType<typeof vi.fn> } {
  const count = vi.fn(async () => counted);
  const request: ChainRequest = {
    key: { allowedModels: null } as unknown as ApiKey,
    meter: { named: vi.fn(), batch: false } as unknown as RequestMeter,
    model: name,
    requested: null,
    preference: null,
    demand: { needs: { ...NO_NEEDS, tools }, bodyBytes, estimatedPromptTokens: Math.round(bodyBytes / 4), outputTokens: 0, countPromptTokens: count },
  };
  return { request, count };
}

function routesOf(chain: ModelChain, index: number): readonly ChannelRoute[] {
  const found = chain.steps[index]?.routes;
  if (found === undefined || typeof found === 'function') throw new Error(`step ${index} has no known routes`);
  return found;
}

describe('modelChain', () => {
  it('is known at once for a small request: the first model’s routes as a value, no tokenizer', () => {
    const { request, count } = ask('solo', 200, 50);
    const chain = modelChain(services, request);
    expect(chain).not.toBeInstanceOf(Promise);
    const known = chain as ModelChain;
    expect(known.steps.map((step) => step.name)).toEqual(['solo']);
    expect(routesOf(known, 0).map((entry) => entry.channel.name)).toEqual(['solo']);
    expect(known.fallbackModels).toEqual([]);
    expect(count).not.toHaveBeenCalled();
  });

  it('waits only when the tokenizer counts near the window, and finishes the same chain', async () => {
    const { request, count } = ask('solo', 3800, 990);
    const chain = modelChain(services, request);
    expect(chain).toBeInstanceOf(Promise);
    expect(routesOf(await chain, 0)).toHaveLength(1);
    expect(count).toHaveBeenCalledTimes(1);
    const over = ask('solo', 3800, 1500);
    await expect(modelChain(services, over.request)).rejects.toMatchObject({ code: 'context_length_exceeded', status: 400 });
  });

  it('keeps a first model’s fallback-worthy refusal for the relay loop, counted or not', async () => {
    const counted = await modelChain(services, ask('small', 3800, 1500).request);
    expect(counted.steps.map((step) => step.name)).toEqual(['small', 'large']);
    expect(counted.fallbackModels.map((entry) => entry.id)).toEqual(['large']);
    const refused = counted.steps[0]?.routes;
    expect(typeof refused).toBe('function');
    expect(() => (refused as () => unknown)()).toThrow(expect.objectContaining({ code: 'context_length_exceeded' }));
    const fallback = counted.steps[1]?.routes as () => readonly ChannelRoute[];
    expect(fallback().map((entry) => entry.channel.name)).toEqual(['large']);

    const unserved = modelChain(services, ask('bare', 200, 50).request) as ModelChain;
    expect(unserved).not.toBeInstanceOf(Promise);
    expect(() => (unserved.steps[0]?.routes as () => unknown)()).toThrow(expect.objectContaining({ code: 'upstream_unavailable' }));
  });

  it('refuses at once what no fallback may pass over, or what has no fallback', () => {
    expect(() => modelChain(services, ask('lonely', 200, 50).request)).toThrow(expect.objectContaining({ code: 'upstream_unavailable' }));
    expect(() => modelChain(services, ask('blind', 200, 50, true).request)).toThrow(expect.objectContaining({ code: 'model_capability_unsupported' }));
    expect(() => modelChain(services, ask('missing', 200, 50).request)).toThrow(expect.objectContaining({ code: 'model_not_found' }));
  });

  it('takes the caller’s own list in place of the model’s fallbacks', () => {
    const { request } = ask('solo', 200, 50);
    const chain = modelChain(services, { ...request, requested: ['large'] }) as ModelChain;
    expect(chain.steps.map((step) => step.name)).toEqual(['solo', 'large']);
    expect(routesOf(chain, 0)).toHaveLength(1);
    expect(() => modelChain(services, { ...request, requested: ['nowhere'] })).toThrow(expect.objectContaining({ code: 'model_not_found', param: 'models' }));
  });
});
