/**
 * Rate-limit headers on every billed answer with the default configuration, through the official SDKs of the three
 * families, streamed and not: the generic X-RateLimit set everywhere, OpenAI's `x-ratelimit-*-requests|tokens` on
 * the OpenAI family and Anthropic's `anthropic-ratelimit-*` on the messages family, in the vendors' formats; values
 * count down within a window and start again in the next one (injected clock).
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../src/shared/clock.js';
import { DEFAULT_TIER_RPM, DEFAULT_TIER_TPM } from '../../../src/storage/migrations/0007-account-lifecycle-and-key-budgets.js';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel } from '../admin/helpers.js';
import { MINUTE, nextWindow } from './limits-support.js';

const MODEL = 'family-headers-model';

let gateway: TestGateway;
const clock = new ManualClock(Math.floor(Date.now() / MINUTE) * MINUTE);

beforeAll(async () => {
  gateway = await startTestGateway({ clock });
  await addSimulatorModel(gateway, MODEL, undefined, { settings: { output_tokens: 6 } });
});

afterAll(async () => {
  await gateway?.close();
});

type HeaderSource = Pick<Headers, 'get'>;

/** OpenAI's reset format (Go durations, as `x-ratelimit-reset-*` documents): `12ms`, `1s`, `59.5s`, `6m0s`, `1h2m3s`. */
function parseOpenAIDuration(text: string | null): number {
  const match = /^(?:(\d+)h)?(?:(\d+)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$/.exec(text ?? '');
  if (match === null || text === '') throw new Error(`not an OpenAI reset duration: ${String(text)}`);
  const [, hours, minutes, seconds, milliseconds] = match;
  return Number(hours ?? 0) * 3_600_000 + Number(minutes ?? 0) * 60_000 + Number(seconds ?? 0) * 1000 + Number(milliseconds ?? 0);
}

/** Anthropic's reset format: RFC 3339. */
function parseRfc3339(text: string | null): number {
  expect(text).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/);
  return Date.parse(text as string);
}

function generic(headers: HeaderSource): { limit: number; remaining: number; reset: number; dimension: string | null } {
  return {
    limit: Number(headers.get('x-ratelimit-limit')),
    remaining: Number(headers.get('x-ratelimit-remaining')),
    reset: Number(headers.get('x-ratelimit-reset')),
    dimension: headers.get('x-ratelimit-dimension'),
  };
}

function openAISet(headers: HeaderSource): { requests: number[]; tokens: number[] } {
  const set = (suffix: string): number[] => [
    Number(headers.get(`x-ratelimit-limit-${suffix}`)),
    Number(headers.get(`x-ratelimit-remaining-${suffix}`)),
    parseOpenAIDuration(headers.get(`x-ratelimit-reset-${suffix}`)),
  ];
  return { requests: set('requests'), tokens: set('tokens') };
}

function anthropicSet(headers: HeaderSource, prefix: string): number[] {
  return [
    Number(headers.get(`anthropic-ratelimit-${prefix}-limit`)),
    Number(headers.get(`anthropic-ratelimit-${prefix}-remaining`)),
    parseRfc3339(headers.get(`anthropic-ratelimit-${prefix}-reset`)),
  ];
}

describe('default configuration, OpenAI SDK', () => {
  it('non-streamed and streamed answers carry the generic and OpenAI sets, counting down and starting again next window', async () => {
    const { key } = await seedAccount(gateway);
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: key, maxRetries: 0 });
    const start = nextWindow(clock, 15_500);
    const first = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'one' }] }).withResponse();
    expect(generic(first.response.headers)).toEqual({ limit: DEFAULT_TIER_RPM, remaining: DEFAULT_TIER_RPM - 1, reset: (start + MINUTE) / 1000, dimension: 'account-rpm' });
    const firstSet = openAISet(first.response.headers);
    expect(firstSet.requests).toEqual([DEFAULT_TIER_RPM, DEFAULT_TIER_RPM - 1, MINUTE - 15_500]);
    expect(first.response.headers.get('x-ratelimit-reset-requests')).toBe('44.5s');
    expect(firstSet.tokens[0]).toBe(DEFAULT_TIER_TPM);
    expect(firstSet.tokens[1]).toBeLessThan(DEFAULT_TIER_TPM);
    expect(firstSet.tokens[2]).toBe(MINUTE - 15_500);

    // Streamed: the headers are known before the first byte.
    const streamed = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'two' }], stream: true }).withResponse();
    for await (const chunk of streamed.data) expect(chunk.object).toBe('chat.completion.chunk');
    expect(generic(streamed.response.headers)).toMatchObject({ remaining: DEFAULT_TIER_RPM - 2, dimension: 'account-rpm' });
    expect(openAISet(streamed.response.headers).requests[1]).toBe(DEFAULT_TIER_RPM - 2);
    expect(openAISet(streamed.response.headers).tokens[1]).toBeLessThan(firstSet.tokens[1] as number);

    nextWindow(clock, 59_000);
    const next = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'three' }] }).withResponse();
    expect(openAISet(next.response.headers).requests).toEqual([DEFAULT_TIER_RPM, DEFAULT_TIER_RPM - 1, 1000]);
    expect(next.response.headers.get('x-ratelimit-reset-requests')).toBe('1s');
    // The messages family's set is not sent to OpenAI clients.
    expect(next.response.headers.get('anthropic-ratelimit-requests-limit')).toBeNull();
  });

  it('a key limit tighter than the account\'s is the one reported, in both sets', async () => {
    const { key } = await seedAccount(gateway, { key: { rpm: 5, tpm: 100_000 } });
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: key, maxRetries: 0 });
    nextWindow(clock, 1000);
    const answer = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'tight' }] }).withResponse();
    expect(generic(answer.response.headers)).toMatchObject({ limit: 5, remaining: 4, dimension: 'key-rpm' });
    expect(openAISet(answer.response.headers).requests.slice(0, 2)).toEqual([5, 4]);
    expect(openAISet(answer.response.headers).tokens[0]).toBe(100_000);
  });
});

describe('default configuration, Anthropic SDK', () => {
  it('non-streamed and streamed answers carry the generic and Anthropic sets with RFC 3339 resets', async () => {
    const { key } = await seedAccount(gateway);
    const client = new Anthropic({ baseURL: gateway.url, apiKey: key, maxRetries: 0 });
    const start = nextWindow(clock, 30_000);
    const { response } = await client.messages.create({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).withResponse();
    expect(generic(response.headers)).toMatchObject({ limit: DEFAULT_TIER_RPM, remaining: DEFAULT_TIER_RPM - 1, dimension: 'account-rpm' });
    expect(anthropicSet(response.headers, 'requests')).toEqual([DEFAULT_TIER_RPM, DEFAULT_TIER_RPM - 1, start + MINUTE]);
    const tokens = anthropicSet(response.headers, 'tokens');
    expect(tokens[0]).toBe(DEFAULT_TIER_TPM);
    // Prompt estimate plus max_tokens was taken from the window before forwarding.
    expect(tokens[1]).toBeLessThanOrEqual(DEFAULT_TIER_TPM - 50);
    expect(anthropicSet(response.headers, 'input-tokens')).toEqual(tokens);
    expect(anthropicSet(response.headers, 'output-tokens')).toEqual(tokens);
    expect(response.headers.get('x-ratelimit-limit-requests')).toBeNull();

    const stream = client.messages.stream({ model: MODEL, max_tokens: 50, messages: [{ role: 'user', content: 'stream' }] });
    const { response: streamed } = await stream.withResponse();
    const final = await stream.finalMessage();
    expect(final.content.length).toBeGreaterThan(0);
    expect(anthropicSet(streamed.headers, 'requests')).toEqual([DEFAULT_TIER_RPM, DEFAULT_TIER_RPM - 2, start + MINUTE]);
    expect(generic(streamed.headers).remaining).toBe(DEFAULT_TIER_RPM - 2);
  });
});

describe('default configuration, Gemini SDK', () => {
  it('non-streamed and streamed answers carry the generic set', async () => {
    const { key } = await seedAccount(gateway);
    const seen: Headers[] = [];
    const originalFetch = globalThis.fetch;
    globalThis.fetch = async (...args: Parameters<typeof fetch>) => {
      const answer = await originalFetch(...args);
      seen.push(answer.headers);
      return answer;
    };
    try {
      const genai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });
      const start = nextWindow(clock, 2000);
      const answer = await genai.models.generateContent({ model: MODEL, contents: 'hello' });
      expect(answer.text).not.toBe('');
      let text = '';
      for await (const chunk of await genai.models.generateContentStream({ model: MODEL, contents: 'stream' })) text += chunk.text ?? '';
      expect(text).not.toBe('');
      expect(seen.map((headers) => generic(headers))).toEqual([
        { limit: DEFAULT_TIER_RPM, remaining: DEFAULT_TIER_RPM - 1, reset: (start + MINUTE) / 1000, dimension: 'account-rpm' },
        { limit: DEFAULT_TIER_RPM, remaining: DEFAULT_TIER_RPM - 2, reset: (start + MINUTE) / 1000, dimension: 'account-rpm' },
      ]);
      expect(seen[0]?.get('x-ratelimit-limit-requests')).toBeNull();
      expect(seen[0]?.get('anthropic-ratelimit-requests-limit')).toBeNull();
    } finally {
      globalThis.fetch = originalFetch;
    }
  });
});
