/** Regression tests for bugs found by review: each would fail again if its bug came back. */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { usdToNano } from '../../../src/billing/money.js';
import { findUsageInJson, usageFromOpenAI } from '../../../src/wire/openai/usage.js';
import type { ChannelRoute } from '../../../src/routing/catalog.js';
import { orderCandidates } from '../../../src/routing/order-candidates.js';
import { BatchWriter } from '../../../src/shared/batch-writer.js';
import { silentLogger } from '../../../src/shared/logger.js';

const body = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('regression: usdToNano accepts exponent-form strings as documented', () => {
  it('converts "1e-7" like the number 1e-7', () => {
    expect(usdToNano(1e-7)).toBe(100n);
    expect(usdToNano('1e-7')).toBe(100n);
    expect(usdToNano('1E3')).toBe(1_000_000_000_000n);
  });

  it('refuses "2.5e-9" as finer than 1e-9, like the number', () => {
    expect(() => usdToNano(2.5e-9)).toThrow(/finer than 1e-9/);
    expect(() => usdToNano('2.5e-9')).toThrow(/finer than 1e-9/);
  });
});

describe('regression: findUsageInJson reads only the top-level usage, whatever the completion text holds', () => {
  it('reads a real usage that precedes choices when completion text ends in `"usage` (under-bills to zero)', () => {
    const json = '{"usage":{"prompt_tokens":7,"completion_tokens":3},"choices":[{"index":0,"message":{"content":"say \\"usage"}},{"index":1,"message":{"content":"x"}}]}';
    expect(JSON.parse(json).choices[0].message.content).toBe('say "usage');
   
    expect(findUsageInJson(body(json))).toEqual(usageFromOpenAI({ prompt_tokens: 7, completion_tokens: 3 }));
  });

  it('the same with tool_calls following the content in the same message', () => {
    const completion = {
      usage: { prompt_tokens: 120, completion_tokens: 40 },
      choices: [{ index: 0, message: { role: 'assistant', content: 'ok "usage', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] } }],
    };
    expect(findUsageInJson(body(JSON.stringify(completion)))).toEqual(usageFromOpenAI(completion.usage));
  });

  it('is null for "usage": null even when a later string holds a brace', () => {
    expect(findUsageInJson(body('{"choices":[],"usage":null,"service_tier":"{}"}'))).toBeNull();
  });

  it('is null without a usage key even when an earlier string ends in `"usage`', () => {
    const json = JSON.stringify({ model: '"usage', choices: [{ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'stop' }] });
    expect(findUsageInJson(body(json))).toBeNull();
  });

  it('property: equals usageFromOpenAI(obj.usage) for chat-completion-like objects with usage anywhere', () => {
    const tricky = fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('"usage"', '"usage', 'usage', '{', '}', '"', '\\', '{"prompt_tokens":999}')), { maxLength: 6 })
      .map((parts) => parts.join(''));
    const usage = fc.option(fc.record({ prompt_tokens: fc.nat({ max: 10_000 }), completion_tokens: fc.nat({ max: 10_000 }) }), { nil: null });
    const choice = fc.record({ index: fc.nat({ max: 3 }), message: fc.record({ role: fc.constant('assistant'), content: tricky }) });
    const entries = fc.tuple(
      fc.option(usage, { nil: undefined }),
      fc.array(choice, { maxLength: 3 }),
      tricky,
      fc.nat({ max: 3 }),
    ).map(([usageValue, choices, fingerprint, position]) => {
      const fields: Array<[string, unknown]> = [['id', 'chatcmpl-1'], ['choices', choices], ['system_fingerprint', fingerprint]];
      if (usageValue !== undefined) fields.splice(position % (fields.length + 1), 0, ['usage', usageValue]);
      return Object.fromEntries(fields) as { usage?: unknown };
    });
    fc.assert(fc.property(entries, (completion) => {
      expect(findUsageInJson(body(JSON.stringify(completion)))).toEqual(usageFromOpenAI(completion.usage));
    }), { numRuns: 500 });
  });
});

describe('regression: BatchWriter writes as soon as maxBatch items wait', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('writes a full batch immediately, not after intervalMs', async () => {
    vi.useFakeTimers();
    const batches: number[][] = [];
    const writer = new BatchWriter(async (items: number[]) => { batches.push(items); }, { name: 't', maxBatch: 3, intervalMs: 10_000, retryDelayMs: 1 }, silentLogger);
    writer.add(1);
    writer.add(2);
    writer.add(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(batches).toEqual([[1, 2, 3]]);
  });
});

function route(name: string, weight: number): ChannelRoute {
  return { channel: { id: name, name, priority: 0, weight } as ChannelRoute['channel'], upstreamModel: 'm' };
}

function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function shareFirst(routes: ChannelRoute[], name: string, draws: number, seed: number): number {
  const random = seeded(seed);
  let first = 0;
  for (let index = 0; index < draws; index += 1) if (orderCandidates(routes, random)[0]?.channel.name === name) first += 1;
  return first / draws;
}

describe('regression: small channel weights do not underflow in candidate ordering', () => {
  it('never puts a weight-0 channel before a weight-0.01 channel', () => {
   
    expect(shareFirst([route('zero', 0), route('small', 0.01)], 'zero', 20_000, 1)).toBe(0);
  });

  it('gives 0.0001:0.0003 the same 25% / 75% split as 1:3, whatever the listing order', () => {
    expect(Math.abs(shareFirst([route('a', 1), route('b', 3)], 'a', 20_000, 2) - 0.25)).toBeLessThan(0.03);
   
    expect(Math.abs(shareFirst([route('a', 0.0001), route('b', 0.0003)], 'a', 20_000, 3) - 0.25)).toBeLessThan(0.03);
    expect(Math.abs(shareFirst([route('b', 0.0003), route('a', 0.0001)], 'a', 20_000, 4) - 0.25)).toBeLessThan(0.03);
  });
});
