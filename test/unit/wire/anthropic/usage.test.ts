import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findUsageInMessageJson, mergeUsageCounters, usageFromAnthropic, usageToAnthropic } from '../../../../src/wire/anthropic/usage.js';
import { canonicalUsage, tokens } from '../usage-arbitraries.js';

describe('Anthropic usage', () => {
  it('canonical → wire → canonical is the identity', () => {
    fc.assert(
      fc.property(canonicalUsage, (usage) => {
        expect(usageFromAnthropic(usageToAnthropic(usage))).toEqual(usage);
      }),
    );
  });

  it('wire → canonical → wire is the identity (thinking is part of output_tokens)', () => {
    const wireUsage = fc
      .record({ input: tokens, read: tokens, write: tokens, output: tokens, thinkingShare: fc.double({ min: 0, max: 1, noNaN: true }) })
      .map(({ input, read, write, output, thinkingShare }) => {
        const thinking = Math.floor(output * thinkingShare);
        return {
          input_tokens: input,
          cache_creation_input_tokens: write,
          cache_read_input_tokens: read,
          output_tokens: output,
          ...(thinking > 0 ? { output_tokens_details: { thinking_tokens: thinking } } : {}),
        };
      });
    fc.assert(
      fc.property(wireUsage, (wire) => {
        expect(usageToAnthropic(usageFromAnthropic(wire))).toEqual(wire);
      }),
    );
  });

  it('reads anything without throwing: counters are whole and never negative, non-objects give null', () => {
    fc.assert(
      fc.property(fc.anything(), (raw) => {
        const usage = usageFromAnthropic(raw);
        if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) expect(usage).toBeNull();
        if (usage === null) return;
        for (const value of [...Object.values(usage.input), ...Object.values(usage.output)]) {
          expect(Number.isInteger(value) && value >= 0).toBe(true);
        }
        expect(usage.output.text + usage.output.reasoning).toBe(usage.output.total);
      }),
    );
  });

  it('a stream’s later counters replace earlier ones and absent ones stay', () => {
    const counters: Record<string, unknown> = {};
    mergeUsageCounters(counters, { input_tokens: 12, cache_read_input_tokens: 3, output_tokens: 1 });
    mergeUsageCounters(counters, { output_tokens: 40, input_tokens: null });
    expect(usageFromAnthropic(counters).output.total).toBe(40);
    expect(usageFromAnthropic(counters).input).toEqual({ total: 15, noCache: 12, cacheRead: 3, cacheWrite: 0 });
  });

  it('finds the usage of a message body, and none in text that is not JSON', () => {
    const body = Buffer.from(JSON.stringify({ type: 'message', usage: { input_tokens: 5, output_tokens: 7 } }));
    expect(findUsageInMessageJson(body)?.output.total).toBe(7);
    expect(findUsageInMessageJson(Buffer.from('not json'))).toBeNull();
  });
});
