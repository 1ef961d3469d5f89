import fc from 'fast-check';
import type { FinishReason, UnifiedFinishReason } from '../../../src/ir/finish-reason.js';
import type { Usage } from '../../../src/ir/usage.js';

const tokens = fc.nat({ max: 10_000_000 });

/** A consistent canonical usage: the input total is the sum of its parts, the output total of its parts. */
export const canonicalUsage: fc.Arbitrary<Usage> = fc
  .record({ noCache: tokens, cacheRead: tokens, cacheWrite: tokens, text: tokens, reasoning: tokens })
  .map(({ noCache, cacheRead, cacheWrite, text, reasoning }) => ({
    input: { total: noCache + cacheRead + cacheWrite, noCache, cacheRead, cacheWrite },
    output: { total: text + reasoning, text, reasoning },
  }));

/** The same, for wires that have no counter for cache writes. */
export const usageWithoutCacheWrites: fc.Arbitrary<Usage> = canonicalUsage.map((usage) => ({
  input: { ...usage.input, total: usage.input.total - usage.input.cacheWrite, cacheWrite: 0 },
  output: usage.output,
}));

export const UNIFIED_FINISH_REASONS: readonly UnifiedFinishReason[] = ['stop', 'length', 'tool-calls', 'content-filter', 'error', 'other'];

/** A finish reason from another upstream: a unified value and a raw value no wire of ours defines. */
export const foreignFinishReason: fc.Arbitrary<FinishReason> = fc.record({
  unified: fc.constantFrom(...UNIFIED_FINISH_REASONS),
  raw: fc.constantFrom<string | null>(null, 'eos', 'some_new_reason'),
});

export { tokens };
