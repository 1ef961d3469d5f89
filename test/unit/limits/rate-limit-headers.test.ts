import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { admittedRateLimitHeaders, goDuration, rfc3339 } from '../../../src/limits/rate-limit-headers.js';
import type { LimitState } from '../../../src/limits/rate-limiter.js';
import { anthropicFamily, geminiFamily, openAIFamily } from '../../../src/codecs/families.js';

function state(id: string, limit: number, remaining: number, resetAtMs: number): LimitState {
  return { rule: { id, dimension: id.replace(/:.*:/, '-'), limit, windowMs: 60_000 }, remaining, resetAtMs };
}

describe('vendor formats', () => {
  it.each([[0, '0ms'], [12, '12ms'], [999.2, '1s'], [1000, '1s'], [1001, '1.001s'], [1010.5, '1.011s'], [59_500, '59.5s'], [59_999, '59.999s'], [360_000, '6m0s'], [3_723_250, '1h2m3.25s'], [3_600_050, '1h0m0.05s']])('OpenAI reset %s ms is %s', (ms, text) => {
    expect(goDuration(ms)).toBe(text);
  });

  it('property: OpenAI resets read as Go durations rounded up to the millisecond', () => {
    // The plain reading of Go's format: hours and minutes when present, seconds with up to three decimals.
    const reference = (milliseconds: number): string => {
      const ms = Math.max(0, Math.ceil(milliseconds));
      if (ms < 1000) return `${ms}ms`;
      const hours = Math.floor(ms / 3_600_000);
      const minutes = Math.floor((ms % 3_600_000) / 60_000);
      const seconds = `${Number(((ms % 60_000) / 1000).toFixed(3))}s`;
      return hours > 0 ? `${hours}h${minutes}m${seconds}` : minutes > 0 ? `${minutes}m${seconds}` : seconds;
    };
    fc.assert(fc.property(fc.double({ min: -1000, max: 200 * 3_600_000, noNaN: true }), (ms) => {
      expect(goDuration(ms)).toBe(reference(ms));
    }), { numRuns: 2000 });
  });

  it('Anthropic resets are RFC 3339 to the second, rounded up', () => {
    expect(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5))).toBe('2026-01-02T03:04:05Z');
    expect(rfc3339(Date.UTC(2026, 0, 2, 3, 4, 5) + 1)).toBe('2026-01-02T03:04:06Z');
  });
});

describe('admittedRateLimitHeaders', () => {
  const states = [state('key:k:rpm', 10, 9, 60_000), state('key:k:tpm', 1000, 100, 60_000), state('account:a:rpm', 100, 5, 60_000)];
  const windows = { states, tokenRules: new Set(['key:k:tpm']) };

  it('reports the tightest window overall, and per family the tightest of each kind', () => {
    const openai = admittedRateLimitHeaders(windows, openAIFamily, 30_000);
    expect(openai).toMatchObject({ 'x-ratelimit-limit': '100', 'x-ratelimit-remaining': '5', 'x-ratelimit-dimension': 'account-rpm' });
    expect(openai).toMatchObject({ 'x-ratelimit-limit-requests': '100', 'x-ratelimit-remaining-requests': '5', 'x-ratelimit-reset-requests': '30s' });
    expect(openai).toMatchObject({ 'x-ratelimit-limit-tokens': '1000', 'x-ratelimit-remaining-tokens': '100', 'x-ratelimit-reset-tokens': '30s' });
    const anthropic = admittedRateLimitHeaders(windows, anthropicFamily, 30_000);
    expect(anthropic).toMatchObject({ 'anthropic-ratelimit-requests-remaining': '5', 'anthropic-ratelimit-output-tokens-limit': '1000', 'anthropic-ratelimit-input-tokens-reset': '1970-01-01T00:01:00Z' });
    expect(Object.keys(admittedRateLimitHeaders(windows, geminiFamily, 30_000)).sort()).toEqual(['x-ratelimit-dimension', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset']);
  });

  it('sends nothing when no window applies', () => {
    expect(admittedRateLimitHeaders({ states: [], tokenRules: new Set() }, openAIFamily, 0)).toEqual({});
  });
});
