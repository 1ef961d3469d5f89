/** Helpers of the limits end-to-end tests: chat calls with every knob, the rate-limit headers, window arithmetic. */
import { expect } from 'vitest';
import type { ManualClock } from '../../../src/shared/clock.js';
import type { TestGateway } from '../../support/gateway-harness.js';
import { call, expectError, type HttpAnswer } from '../admin/helpers.js';

export const MINUTE = 60_000;

export interface ChatCall {
  model: string;
  content?: string;
  maxTokens?: number;
  stream?: boolean;
  signal?: AbortSignal;
}

/** POST /v1/chat/completions with `key` (raw fetch: every status and header is visible). */
export function chatWith(gateway: TestGateway, key: string, options: ChatCall): Promise<HttpAnswer> {
  return call(gateway.url, 'POST', '/v1/chat/completions', {
    token: key,
    body: {
      model: options.model,
      messages: [{ role: 'user', content: options.content ?? 'Hello there' }],
      ...(options.maxTokens === undefined ? {} : { max_tokens: options.maxTokens }),
      ...(options.stream === true ? { stream: true } : {}),
    },
  });
}

export interface RateLimitHeaders {
  limit: number;
  remaining: number;
  reset: number;
  dimension: string | null;
}

export function rateLimitHeadersOf(answer: HttpAnswer<unknown>): RateLimitHeaders {
  const header = (name: string): number => Number(answer.headers.get(name));
  return {
    limit: header('x-ratelimit-limit'),
    remaining: header('x-ratelimit-remaining'),
    reset: header('x-ratelimit-reset'),
    dimension: answer.headers.get('x-ratelimit-dimension'),
  };
}

/** A 429 of a rate dimension: the spec's type and code, Retry-After in whole seconds; returns Retry-After. */
export function expectRateLimited(answer: HttpAnswer<unknown>, dimension?: string): number {
  const error = expectError(answer, { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded' });
  if (dimension !== undefined) expect(error.message, answer.text).toContain(dimension);
  const retryAfter = answer.headers.get('retry-after');
  expect(retryAfter, answer.text).toMatch(/^\d+$/);
  return Number(retryAfter);
}

/** Moves the clock forward to `offsetMs` into the next minute window; returns that window's start. */
export function nextWindow(clock: ManualClock, offsetMs: number): number {
  const start = Math.floor(clock.now() / MINUTE) * MINUTE + MINUTE;
  clock.set(start + offsetMs);
  return start;
}

export function expectOk(answer: HttpAnswer<unknown>): void {
  expect(answer.status, answer.text).toBe(200);
}
