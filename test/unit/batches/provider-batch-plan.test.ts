/**
 * Where a batch's lines go: wholly to one provider's batch API when one channel of it serves every line, else split
 * (the first model a batch provider's channel takes goes there, the rest to the gateway's queue), one provider part
 * per batch, OpenAI's one model per provider batch kept, channels switched off and pass-through off respected.
 */
import { describe, expect, it } from 'vitest';
import { planProviderBatch } from '../../../src/batches/provider-batches/provider-batch-plan.js';
import type { BatchEndpoint, BatchLineInput } from '../../../src/domain/batches.js';
import type { Channel } from '../../../src/domain/records.js';
import type { GatewayServices } from '../../../src/services.js';

const channel = (id: string, type: string, models: string[], settings: Record<string, unknown> = {}): Channel => ({
  id, name: id, type: type as Channel['type'], baseUrl: null, apiKeys: ['k'], models: Object.fromEntries(models.map((model) => [model, model])),
  priority: 0, weight: 1, enabled: true, headers: {}, settings, createdAt: 0, updatedAt: 0,
});

function services(channels: Channel[], passThrough = true): GatewayServices {
  return {
    config: { batches: { providerPassThrough: passThrough } },
    catalog: { routes: (model: string) => channels.filter((entry) => model in entry.models).map((entry) => ({ channel: entry, upstreamModel: entry.models[model] })) },
  } as unknown as GatewayServices;
}

const lines = (models: string[]): BatchLineInput[] => models.map((model, index) => ({ line: index + 1, customId: `c-${index}`, body: JSON.stringify({ model, messages: [] }) }));
const CHAT: BatchEndpoint = '/v1/chat/completions';

const openai = channel('ch-openai', 'openai', ['gpt-a', 'gpt-b']);
const anthropic = channel('ch-anthropic', 'anthropic', ['claude-a', 'claude-b']);
const gemini = channel('ch-gemini', 'gemini', ['gemini-a']);

describe('planProviderBatch', () => {
  it('sends a one-model batch wholly to the provider', () => {
    const plan = planProviderBatch(services([openai]), CHAT, lines(['gpt-a', 'gpt-a']));
    expect(plan?.provider).toBe('openai');
    expect([...(plan?.lines ?? [])]).toEqual([1, 2]);
  });

  it('splits a batch across providers: the first model\'s lines to OpenAI, the rest to the queue', () => {
    const plan = planProviderBatch(services([openai, anthropic, gemini], true), CHAT, lines(['claude-a', 'gpt-a', 'gemini-a', 'gpt-a', 'gpt-b']));
    // OpenAI's Batch API takes one model: gpt-a's lines; gpt-b, the Claude and Gemini lines run on the queue.
    expect(plan?.provider).toBe('openai');
    expect(plan?.channel.id).toBe('ch-openai');
    expect([...(plan?.lines ?? [])].sort()).toEqual([2, 4]);
  });

  it('gives Anthropic every model its channel serves when no OpenAI channel takes batches', () => {
    const off = channel('ch-openai-off', 'openai', ['gpt-a'], { provider_batches: false });
    const plan = planProviderBatch(services([off, anthropic, gemini]), CHAT, lines(['gpt-a', 'claude-a', 'gemini-a', 'claude-b']));
    expect(plan?.provider).toBe('anthropic');
    expect([...(plan?.lines ?? [])].sort()).toEqual([2, 4]);
  });

  it('keeps every line on the queue when no line can go to a provider, or pass-through is off', () => {
    const off = channel('ch-anthropic-off', 'anthropic', ['claude-a'], { provider_batches: false });
    expect(planProviderBatch(services([off, gemini]), CHAT, lines(['claude-a', 'gemini-a']))).toBeNull();
    expect(planProviderBatch(services([openai, anthropic], false), CHAT, lines(['gpt-a', 'claude-a']))).toBeNull();
    // Moderations have no provider batch API.
    expect(planProviderBatch(services([openai]), '/v1/moderations', lines(['gpt-a']))).toBeNull();
  });
});
