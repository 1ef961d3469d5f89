/** What the caller sees when the pool is exhausted, and how the upstream's Retry-After is read. */
import { describe, expect, it } from 'vitest';
import { poolExhaustedError, retryAfterMsOf, upstreamFailureError } from '../../../src/relay/upstream-call.js';
import { failureScope, UPSTREAM_FAILURE_CLASSES } from '../../../src/routing/failure-class.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

describe('retryAfterMsOf', () => {
  it.each([
    [{ 'retry-after': '3' }, 3000],
    [{ 'retry-after': '0.5' }, 500],
    [{ 'retry-after-ms': '250', 'retry-after': '9' }, 250],
    [{ 'retry-after': 'Thu, 01 Jan 2026 00:00:07 GMT' }, 7000],
    [{ 'retry-after': '999999' }, 3_600_000],
    [{ 'retry-after': 'soon' }, null],
    [{}, null],
  ])('%j → %s', (headers, expected) => {
    expect(retryAfterMsOf(headers, NOW)).toBe(expected);
  });
});

describe('poolExhaustedError', () => {
  it('answers 503 with the smallest Retry-After when every attempt was throttled', () => {
    const error = poolExhaustedError([{ failureClass: 'throttled', retryAfterMs: 4200 }, { failureClass: 'throttled', retryAfterMs: 2100 }], false);
    expect(error).toMatchObject({ status: 503, code: 'upstream_error', type: 'upstream_error', retryAfterSeconds: 3 });
  });

  it('answers 502 otherwise, naming timeouts and a spent budget in the message only', () => {
    const timeout = poolExhaustedError([{ failureClass: 'server_error', retryAfterMs: null }, { failureClass: 'first_byte_timeout', retryAfterMs: null }], true);
    expect(timeout).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(timeout.message).toMatch(/did not answer in time; all 2 channels tried before the retry time budget ran out/);
    expect(poolExhaustedError([{ failureClass: 'connect', retryAfterMs: null }, { failureClass: 'throttled', retryAfterMs: 1000 }], false).status).toBe(502);
  });

  it('mid-stream failures are 502 upstream_error too', () => {
    expect(upstreamFailureError('idle_timeout')).toMatchObject({ status: 502, code: 'upstream_error' });
    expect(upstreamFailureError('cut').message).toMatch(/mid-response/);
  });
});

describe('failureScope', () => {
  it('puts host and key failures on the channel, answer failures on the channel-model', () => {
    const scopes = Object.fromEntries(UPSTREAM_FAILURE_CLASSES.map((failureClass) => [failureClass, failureScope(failureClass)]));
    expect(scopes).toEqual({
      connect: 'channel', reset: 'channel', credential: 'channel', unavailable: 'channel',
      first_byte_timeout: 'model', idle_timeout: 'model', cut: 'model', server_error: 'model', throttled: 'model', bad_response: 'model', stream_error: 'model',
    });
  });
});
