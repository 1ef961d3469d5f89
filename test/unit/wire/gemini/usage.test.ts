import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeGeminiUsage, findGeminiUsageInJson, usageFromGemini } from '../../../../src/wire/gemini/usage.js';
import { tokens, usageWithoutCacheWrites } from '../usage-arbitraries.js';

describe('Gemini usage', () => {
  it('canonical → usageMetadata → canonical is the identity (Gemini has no cache-write counter)', () => {
    fc.assert(
      fc.property(usageWithoutCacheWrites, (usage) => {
        const metadata = encodeGeminiUsage(usage);
        expect(metadata.totalTokenCount).toBe(usage.input.total + usage.output.total);
        expect(usageFromGemini(metadata)).toEqual(usage);
      }),
    );
  });

  it('usageMetadata → canonical → usageMetadata keeps every counter and the total', () => {
    const metadata = fc
      .record({ prompt: tokens, candidates: tokens, thoughts: tokens, cachedShare: fc.double({ min: 0, max: 1, noNaN: true }) })
      .map(({ prompt, candidates, thoughts, cachedShare }) => {
        const cached = Math.floor(prompt * cachedShare);
        return {
          promptTokenCount: prompt,
          candidatesTokenCount: candidates,
          totalTokenCount: prompt + candidates + thoughts,
          ...(cached > 0 ? { cachedContentTokenCount: cached } : {}),
          ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
        };
      });
    fc.assert(
      fc.property(metadata, (wire) => {
        expect(encodeGeminiUsage(usageFromGemini(wire) as NonNullable<ReturnType<typeof usageFromGemini>>)).toEqual(wire);
      }),
    );
  });

  it('counts tool-use prompt tokens as input, and finds the last usage of a streamed JSON array', () => {
    expect(usageFromGemini({ promptTokenCount: 10, toolUsePromptTokenCount: 5, candidatesTokenCount: 2 })?.input.total).toBe(15);
    const body = Buffer.from(JSON.stringify([{ usageMetadata: { promptTokenCount: 1 } }, { usageMetadata: { promptTokenCount: 9 } }, {}]));
    expect(findGeminiUsageInJson(body)?.input.total).toBe(9);
    expect(findGeminiUsageInJson(Buffer.from('['))).toBeNull();
  });
});
