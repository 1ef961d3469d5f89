/** The routing snapshot built from the bundled catalog and stored records: names, overrides and route facts. */
import { describe, expect, it } from 'vitest';
import { BundledCatalog } from '../../../src/catalog/bundled-catalog.js';
import { Catalog } from '../../../src/routing/catalog.js';
import { createLogger } from '../../../src/shared/logger.js';
import type { Channel } from '../../../src/domain/records.js';
import type { Model } from '../../../src/domain/model-records.js';
import type { Storage } from '../../../src/storage/storage.js';

const bundled = new BundledCatalog(Date.parse('2026-11-25T00:00:00Z'));

function channel(name: string, type: Channel['type'], models: Record<string, string>, enabled = true): Channel {
  return { id: name, name, type, baseUrl: null, apiKeys: ['k'], models, priority: 0, weight: 1, enabled, headers: {}, settings: {}, createdAt: 0, updatedAt: 0 };
}

function stored(id: string, input: bigint): Model {
  return {
    id, kind: 'chat', public: true, upstream: null, ownedBy: 'operator', rpm: null, tpm: null, routingStrategy: 'weighted', cache: null, fallbacks: [], createdAt: 0, updatedAt: 0,
    pricing: { inputPerMtokNano: input, outputPerMtokNano: input, cachedInputPerMtokNano: null, cacheWritePerMtokNano: null, perRequestNano: null, perImageNano: null, perAudioMinuteNano: null, perMcharNano: null, perWebSearchNano: null, perGroundedPromptNano: null, perWebFetchNano: null, perFileSearchNano: null, perSearchUnitNano: null, batchInputPerMtokNano: null, batchOutputPerMtokNano: null },
  };
}

async function load(channels: Channel[], models: Model[]): Promise<Catalog> {
  const storage = { channels: { listAll: async () => channels }, models: { listAll: async () => models } } as unknown as Storage;
  const catalog = new Catalog(storage, createLogger('error'), () => true, bundled);
  await catalog.reload();
  return catalog;
}

describe('Catalog with the bundled catalog', () => {
  it('resolves ids, aliases and dated ids to one model; typos and other providers’ models stay unknown', async () => {
    const catalog = await load([channel('claude', 'anthropic', { '*': '' })], []);
    expect(catalog.model('claude-sonnet-4-5')?.id).toBe('claude-sonnet-4-5');
    expect(catalog.model('claude-sonnet-4-5-20250929')?.id).toBe('claude-sonnet-4-5');
    expect(catalog.routes('claude-sonnet-4-5-20250929').map((route) => route.upstreamModel)).toEqual(['claude-sonnet-4-5-20250929']);
    expect(catalog.model('claude-haiku-4-5-20260101')?.id).toBe('claude-haiku-4-5');
    expect(catalog.model('claude-sonnet-4-5-typo')).toBeUndefined();
    expect(catalog.model('gpt-4o')).toBeUndefined();
  });

  it('an operator record overrides prices and keeps the facts, whichever channel comes first', async () => {
    const catalog = await load(
      [channel('own', 'openai-compatible', { 'gpt-4o': 'their-4o' }), channel('openai', 'openai', { '*': '' })],
      [stored('gpt-4o', 7n)],
    );
    const model = catalog.model('gpt-4o-2024-08-06');
    expect(model).toMatchObject({ id: 'gpt-4o', priceSource: 'operator', contextWindow: 128000, pricing: { inputPerMtokNano: 7n } });
    expect(catalog.routes('gpt-4o').map((route) => [route.channel.name, route.upstreamModel, route.facts?.capabilities?.vision])).toEqual([
      ['own', 'their-4o', true], ['openai', 'gpt-4o', true],
    ]);
  });

  it('a route whose channel maps the model to another bundled model carries that model’s facts', async () => {
    const catalog = await load([channel('cheap', 'openai', { smart: 'o3-mini' }), channel('seeing', 'openai', { smart: 'gpt-4o' })], [stored('smart', 1n)]);
    expect(catalog.routes('smart').map((route) => [route.upstreamModel, route.facts?.capabilities?.vision, route.facts?.contextWindow])).toEqual([
      ['o3-mini', false, 200000], ['gpt-4o', true, 128000],
    ]);
  });

  it('a channel may name bundled models by id or alias without a record; unknown names stay unpriced', async () => {
    const catalog = await load([channel('named', 'anthropic', { 'claude-opus-4-1-20250805': '', 'not-a-claude': '' })], []);
    expect(catalog.model('claude-opus-4-1')?.priceSource).toBe('bundled');
    expect(catalog.routes('claude-opus-4-1').map((route) => route.upstreamModel)).toEqual(['claude-opus-4-1-20250805']);
    expect(catalog.model('not-a-claude')).toBeUndefined();
    expect(catalog.hasRoute('claude-sonnet-4-5')).toBe(false);
  });

  it('an openai-compatible channel serves the bundled catalog of the provider its settings name', async () => {
    const groq = { ...channel('groq', 'openai-compatible', { '*': '' }), settings: { catalog_provider: 'groq' } };
    const catalog = await load([groq], []);
    const served = catalog.models().filter((model) => catalog.hasRoute(model.id));
    expect(served.length).toBeGreaterThan(5);
    expect(served.every((model) => model.provider === 'groq' && model.priceSource === 'bundled')).toBe(true);
    expect(catalog.servedModelCount(groq)).toBe(served.length);
  });

  it('a disabled "*" channel makes its models known but routes nothing', async () => {
    const catalog = await load([channel('off', 'gemini', { '*': '' }, false)], []);
    expect(catalog.model('gemini-2.5-flash')?.kind).toBe('chat');
    expect(catalog.hasRoute('gemini-2.5-flash')).toBe(false);
    expect(catalog.model('claude-sonnet-4-5')).toBeUndefined();
  });
});
