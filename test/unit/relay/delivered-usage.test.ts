import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Usage } from '../../../src/ir/usage.js';
import { billedOutput, usageOfDelivered, type DeliveredAnswer } from '../../../src/relay/delivered-usage.js';
import { countTextTokensLocally } from '../../../src/tokenize/count-tokens-locally.js';

const usage = (input: number, output: number, reasoning = 0): Usage => ({
  input: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  output: { total: output, text: output - reasoning, reasoning },
});

function answer(parts: Partial<DeliveredAnswer>): DeliveredAnswer {
  return { reported: null, final: false, accepted: true, deliveredTokens: () => Promise.resolve(0), promptTokens: () => Promise.resolve(40), ...parts };
}

describe('what an abandoned or cut stream is billed', () => {
  it('bills the closing usage as reported', async () => {
    expect(await usageOfDelivered(answer({ reported: usage(10, 99), final: true, deliveredTokens: () => countTextTokensLocally('short') }))).toEqual(usage(10, 99));
  });

  it('bills the input reported in the first event when nothing was delivered yet', async () => {
    expect(await usageOfDelivered(answer({ reported: usage(1234, 1) }))).toEqual(usage(1234, 1));
  });

  it('bills the input counted locally when the upstream reported none', async () => {
    expect(await usageOfDelivered(answer({}))).toEqual(usage(40, 0));
  });

  it('bills the larger of the output reported and the output delivered', async () => {
    const text = 'The grey heron stands still in the shallow water, waiting.';
    const delivered = await countTextTokensLocally(text);
    expect(delivered).toBeGreaterThan(3);
    expect(await usageOfDelivered(answer({ reported: usage(7, 2), deliveredTokens: () => countTextTokensLocally(text) }))).toEqual(usage(7, delivered));
    expect(await usageOfDelivered(answer({ reported: usage(7, delivered + 30), deliveredTokens: () => countTextTokensLocally(text) }))).toEqual(usage(7, delivered + 30));
  });

  it('bills nothing when the upstream refused before accepting the request', async () => {
    expect(await usageOfDelivered(answer({ accepted: false }))).toBeNull();
  });

  it('takes the larger output and keeps the reasoning within it', () => {
    fc.assert(fc.property(fc.nat(5000), fc.nat(5000), fc.nat(5000), (reportedTotal, reasoningSeed, delivered) => {
      const reasoning = reasoningSeed % (reportedTotal + 1);
      const output = billedOutput(usage(0, reportedTotal, reasoning).output, delivered);
      expect(output.total).toBe(Math.max(reportedTotal, delivered));
      expect(output.text + output.reasoning).toBe(output.total);
      expect(output.reasoning).toBeLessThanOrEqual(reasoning);
      expect(output.text).toBeGreaterThanOrEqual(0);
    }));
    expect(billedOutput(null, 12)).toEqual({ total: 12, text: 12, reasoning: 0 });
  });
});
