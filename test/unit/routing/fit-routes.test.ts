/** fitRoutes: capabilities per route, and the context check that runs the tokenizer only near the limit. */
import { describe, expect, it, vi } from 'vitest';
import { NO_NEEDS, type RequestNeeds } from '../../../src/ir/request-needs.js';
import type { ChannelRoute } from '../../../src/routing/catalog.js';
import { fitRoutes } from '../../../src/routing/fit-routes.js';

const capabilities = { tools: true, vision: false, jsonSchema: true, reasoning: false };

function route(name: string, contextWindow: number | null, vision = false): ChannelRoute {
  return { channel: { name } as ChannelRoute['channel'], upstreamModel: name, facts: { capabilities: { ...capabilities, vision }, contextWindow } };
}

function demand(bodyBytes: number, estimatedPromptTokens: number, exact: number, needs: RequestNeeds = NO_NEEDS, outputTokens = 0) {
  const countPromptTokens = vi.fn(async () => exact);
  return { demand: { needs, bodyBytes, estimatedPromptTokens, outputTokens, countPromptTokens }, countPromptTokens };
}

describe('fitRoutes', () => {
  it('keeps only routes whose model offers what the request needs; unknown facts never refuse', async () => {
    const unknown: ChannelRoute = { channel: { name: 'unknown' } as ChannelRoute['channel'], upstreamModel: 'x' };
    const { demand: asked } = demand(100, 25, 25, { ...NO_NEEDS, vision: true, mediaParts: 1 });
    expect((await fitRoutes('m', [route('blind', 1000), route('sees', 1000, true), unknown], asked)).map((entry) => entry.channel.name)).toEqual(['sees', 'unknown']);
    expect(() => fitRoutes('m', [route('blind', 1000)], asked)).toThrow(expect.objectContaining({ code: 'model_capability_unsupported', status: 400 }));
  });

  it('answers at once unless the tokenizer counts, and only then with a promise', async () => {
    const small = demand(900, 225, 5000);
    const known = fitRoutes('m', [route('a', 1000)], small.demand);
    expect(known).not.toBeInstanceOf(Promise);
    expect(known).toHaveLength(1);
    const near = demand(5000, 900, 990);
    const counted = fitRoutes('m', [route('a', 1000)], near.demand);
    expect(counted).toBeInstanceOf(Promise);
    expect(await counted).toHaveLength(1);
    const unknownWindow = fitRoutes('m', [route('a', null)], demand(1_000_000, 250_000, 250_000).demand);
    expect(unknownWindow).not.toBeInstanceOf(Promise);
  });

  it('does not count when the body’s bytes fit, nor when the estimate is well inside the window', async () => {
    const small = demand(900, 225, 5000);
    expect(await fitRoutes('m', [route('a', 1000)], small.demand)).toHaveLength(1);
    const inside = demand(5000, 700, 5000);
    expect(await fitRoutes('m', [route('a', 1000)], inside.demand)).toHaveLength(1);
    expect(small.countPromptTokens).not.toHaveBeenCalled();
    expect(inside.countPromptTokens).not.toHaveBeenCalled();
  });

  it('counts near the limit: lets through what fits, keeps the routes whose window holds it, refuses what fits none', async () => {
    const fits = demand(5000, 900, 990);
    expect(await fitRoutes('m', [route('a', 1000)], fits.demand)).toHaveLength(1);
    expect(fits.countPromptTokens).toHaveBeenCalledTimes(1);
    const larger = demand(5000, 900, 1500);
    expect((await fitRoutes('m', [route('small', 1000), route('large', 2000)], larger.demand)).map((entry) => entry.channel.name)).toEqual(['large']);
    const over = demand(5000, 900, 1001);
    await expect(fitRoutes('m', [route('a', 1000)], over.demand)).rejects.toMatchObject({ code: 'context_length_exceeded', status: 400 });
    const withOutput = demand(5000, 500, 600, NO_NEEDS, 500);
    await expect(fitRoutes('m', [route('a', 1000)], withOutput.demand)).rejects.toMatchObject({ code: 'context_length_exceeded', message: expect.stringContaining('600 in the prompt plus 500 of output') });
  });

  it('skips the check when any route’s window is unknown', async () => {
    const big = demand(1_000_000, 250_000, 250_000);
    expect(await fitRoutes('m', [route('a', 1000), route('b', null)], big.demand)).toHaveLength(2);
    expect(big.countPromptTokens).not.toHaveBeenCalled();
  });
});
