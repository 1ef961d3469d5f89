import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeOpenAIUsage, usageFromOpenAI } from '../../../../src/wire/openai/usage.js';
import { canonicalUsage, tokens } from '../usage-arbitraries.js';

describe('OpenAI usage', () => {
  it('canonical → wire → canonical is the identity (cache writes ride in prompt_tokens_details)', () => {
    fc.assert(
      fc.property(canonicalUsage, (usage) => {
        expect(usageFromOpenAI(encodeOpenAIUsage(usage))).toEqual(usage);
      }),
    );
  });

  it('wire → canonical → wire keeps every counter the gateway writes', () => {
    const wireUsage = fc
      .record({ prompt: tokens, completion: tokens, cachedShare: fc.double({ min: 0, max: 1, noNaN: true }), reasoningShare: fc.double({ min: 0, max: 1, noNaN: true }) })
      .map(({ prompt, completion, cachedShare, reasoningShare }) => ({
        prompt_tokens: prompt,
        completion_tokens: completion,
        cached: Math.floor(prompt * cachedShare),
        reasoning: Math.floor(completion * reasoningShare),
      }));
    fc.assert(
      fc.property(wireUsage, ({ prompt_tokens, completion_tokens, cached, reasoning }) => {
        const raw = { prompt_tokens, completion_tokens, prompt_tokens_details: { cached_tokens: cached }, completion_tokens_details: { reasoning_tokens: reasoning } };
        const back = encodeOpenAIUsage(usageFromOpenAI(raw) as NonNullable<ReturnType<typeof usageFromOpenAI>>);
        expect(back).toMatchObject({ ...raw, total_tokens: prompt_tokens + completion_tokens });
      }),
    );
  });

  it('never reads more cached or reasoning tokens than the totals hold', () => {
    fc.assert(
      fc.property(fc.anything(), (raw) => {
        const usage = usageFromOpenAI(raw);
        if (usage === null) return;
        expect(usage.input.cacheRead + usage.input.cacheWrite).toBeLessThanOrEqual(usage.input.total);
        expect(usage.output.reasoning).toBeLessThanOrEqual(usage.output.total);
        expect(usage.input.noCache).toBeGreaterThanOrEqual(0);
      }),
    );
  });
});
