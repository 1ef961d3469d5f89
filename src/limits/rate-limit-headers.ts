import type { ClientFamily } from '../codecs/client-family.js';
import type { LimitState } from './rate-limiter.js';

/** The windows one admission passed, in admission order, and which of them count tokens (the rest count requests). */
export interface AdmittedWindows {
  states: readonly LimitState[];
  tokenRules: ReadonlySet<string>;
}

/** The generic X-RateLimit headers of one window, plus which dimension it is. */
export function rateLimitHeaders(state: LimitState): Record<string, string> {
  return {
    'x-ratelimit-limit': String(state.rule.limit),
    'x-ratelimit-remaining': String(state.remaining),
    'x-ratelimit-reset': String(Math.ceil(state.resetAtMs / 1000)),
    'x-ratelimit-dimension': state.rule.dimension,
  };
}

/**
 * A duration as OpenAI writes its reset headers (Go's duration format): `12ms`, `1s`, `59.5s`, `6m0s`, `1h2m3s`.
 */
export function goDuration(milliseconds: number): string {
  const ms = Math.max(0, Math.ceil(milliseconds));
  if (ms < 1000) return `${ms}ms`;
  const hours = Math.floor(ms / 3_600_000);
  const minutes = Math.floor((ms % 3_600_000) / 60_000);
  // Whole milliseconds: the seconds' fraction is at most three digits, written without trailing zeros.
  const secondsMs = ms % 60_000;
  const fraction = secondsMs % 1000;
  const secondsText = fraction === 0
    ? `${(secondsMs - fraction) / 1000}s`
    : `${(secondsMs - fraction) / 1000}.${String(fraction).padStart(3, '0').replace(/0+$/, '')}s`;
  if (hours > 0) return `${hours}h${minutes}m${secondsText}`;
  if (minutes > 0) return `${minutes}m${secondsText}`;
  return secondsText;
}

/** The last second `rfc3339` wrote, and its text: every answer of the same window's second writes the same reset. */
let lastSecond = Number.NaN;
let lastText = '';

/** An instant as RFC 3339 in UTC to the second, as Anthropic writes its reset headers. */
export function rfc3339(epochMs: number): string {
  const second = Math.ceil(epochMs / 1000);
  if (second !== lastSecond) {
    lastText = new Date(second * 1000).toISOString().replace('.000Z', 'Z');
    lastSecond = second;
  }
  return lastText;
}

export function openAIRateLimitHeaders(headers: Record<string, string>, suffix: 'requests' | 'tokens', state: LimitState, now: number): void {
  headers[`x-ratelimit-limit-${suffix}`] = String(state.rule.limit);
  headers[`x-ratelimit-remaining-${suffix}`] = String(state.remaining);
  headers[`x-ratelimit-reset-${suffix}`] = goDuration(state.resetAtMs - now);
}

export function anthropicRateLimitHeaders(headers: Record<string, string>, prefix: string, state: LimitState): void {
  headers[`anthropic-ratelimit-${prefix}-limit`] = String(state.rule.limit);
  headers[`anthropic-ratelimit-${prefix}-remaining`] = String(state.remaining);
  headers[`anthropic-ratelimit-${prefix}-reset`] = rfc3339(state.resetAtMs);
}

/**
 * The rate-limit headers of a billed answer: the generic X-RateLimit set of the tightest window of all, and the
 * family's own set where its clients read one (see each family's `addRateLimitHeaders`). Each set describes the
 * tightest window of its kind (the first of equals), all three found in one pass. Computed from what admission
 * already knows: no store round trip.
 */
export function admittedRateLimitHeaders(windows: AdmittedWindows, family: ClientFamily, now: number): Record<string, string> {
  let overall: LimitState | null = null;
  let requests: LimitState | null = null;
  let tokens: LimitState | null = null;
  let overallShare = 0;
  let requestsShare = 0;
  let tokensShare = 0;
  for (const state of windows.states) {
    const share = state.remaining / state.rule.limit;
    if (overall === null || share < overallShare) {
      overall = state;
      overallShare = share;
    }
    if (windows.tokenRules.has(state.rule.id)) {
      if (tokens === null || share < tokensShare) {
        tokens = state;
        tokensShare = share;
      }
    } else if (requests === null || share < requestsShare) {
      requests = state;
      requestsShare = share;
    }
  }
  if (overall === null) return {};
  const headers = rateLimitHeaders(overall);
  family.addRateLimitHeaders(headers, { requests, tokens }, now);
  return headers;
}
