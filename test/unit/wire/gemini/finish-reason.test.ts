import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GEMINI_FINISH_REASONS, mapGeminiFinishReason, toGeminiFinishReason } from '../../../../src/wire/gemini/finish-reason.js';
import { foreignFinishReason } from '../usage-arbitraries.js';

describe('Gemini finish reasons', () => {
  it('wire → canonical → wire gives back every finishReason Gemini defines', () => {
    fc.assert(
      fc.property(fc.constantFrom(...GEMINI_FINISH_REASONS), fc.boolean(), (raw, hasToolCalls) => {
        expect(toGeminiFinishReason(mapGeminiFinishReason(raw, hasToolCalls))).toBe(raw);
      }),
    );
  });

  it('canonical → wire → canonical keeps the unified reason; error and other both read as other', () => {
    fc.assert(
      fc.property(foreignFinishReason, (reason) => {
        const back = mapGeminiFinishReason(toGeminiFinishReason(reason), reason.unified === 'tool-calls').unified;
        expect(back).toBe(reason.unified === 'error' ? 'other' : reason.unified);
      }),
    );
  });
});
