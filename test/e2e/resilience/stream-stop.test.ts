/**
 * A stream in flight ends within a second when its key is revoked or disabled, its account disabled, or its quota
 * left at what it has spent: for each client family it ends with that family's own error event carrying the
 * refusal a new request would get, the upstream connection closes, and the usage row bills what was delivered.
 * Across two gateways on one database and one Redis, a key revoked through one ends the stream on the other.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { redisServerAvailable, startPrivateRedisServer, type PrivateRedisServer } from '../../support/private-redis-server.js';
import { freePort } from '../cli/cli-process.js';
import { channelFor, startTap, startUpstream, usageRow, type AnyUpstream, type ConnectionTap, type Family } from './resilience-support.js';

const PROMPT = 'Please tell me about the grey heron of the river bank in a few words';
/** Pause between the mocks' stream chunks: an answer left alone runs for several seconds. */
const DRIP_MS = 400;
/** How soon after the change's answer the caller's stream must end. */
const END_WITHIN_MS = 1000;

type Client = 'chat' | 'responses' | 'anthropic' | 'gemini';

/** Seen once some of the answer's text reached the caller. */
const ANSWER_TEXT: Record<Client, RegExp> = {
  chat: /"content":"[^"]/,
  responses: /response\.output_text\.delta/,
  anthropic: /"text_delta"/,
  gemini: /"text":"[^"]/,
};

interface Case {
  client: Client;
  upstream: Family;
  /** The change, made through the admin API of `gateway`. */
  stop(gateway: TestGateway, account: SeededAccount): Promise<void>;
  code: string;
  status: number;
}

const patchKey = (body: Record<string, unknown>) => async (gateway: TestGateway, account: SeededAccount): Promise<void> => {
  const answer = await gateway.admin('PATCH', `/admin/keys/${account.keyId}`, body);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
};

const CASES: Case[] = [
  { client: 'chat', upstream: 'openai', stop: patchKey({ status: 'revoked' }), code: 'revoked_api_key', status: 401 },
  { client: 'responses', upstream: 'openai', stop: patchKey({ quota_usd: 0 }), code: 'quota_exhausted', status: 429 },
  { client: 'anthropic', upstream: 'anthropic', stop: patchKey({ status: 'disabled' }), code: 'key_disabled', status: 403 },
  {
    client: 'gemini',
    upstream: 'gemini',
    stop: async (gateway, account) => {
      expect((await gateway.admin('PATCH', `/admin/accounts/${account.accountId}`, { status: 'disabled' })).status).toBe(200);
    },
    code: 'account_disabled',
    status: 403,
  },
];

function streamRequest(gateway: TestGateway, client: Client, model: string, key: string): Promise<Response> {
  const post = (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(gateway.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  switch (client) {
    case 'chat':
      return post('/v1/chat/completions', { model, stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: PROMPT }] });
    case 'responses':
      return post('/v1/responses', { model, stream: true, input: PROMPT });
    case 'anthropic':
      return post('/v1/messages', { model, stream: true, max_tokens: 256, messages: [{ role: 'user', content: PROMPT }] }, { 'anthropic-version': '2023-06-01' });
    case 'gemini':
      return post(`/v1beta/models/${model}:streamGenerateContent?alt=sse`, { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] });
    default: {
      const unknown: never = client;
      throw new Error(`unknown client ${String(unknown)}`);
    }
  }
}

/** The stream's last event, as the family frames its error: its JSON. */
function lastEvent(text: string): Record<string, unknown> {
  const events = text.replace(/\r\n/g, '\n').trim().split(/\n\n/).filter((event) => /^data: /m.test(event));
  const data = /^data: (.*)$/m.exec(events.at(-1) ?? '')?.[1] ?? '';
  return JSON.parse(data) as Record<string, unknown>;
}

/** The error code and the event's framing, per family. */
function expectFamilyError(client: Client, text: string, code: string): void {
  const event = lastEvent(text);
  switch (client) {
    case 'chat':
      expect(event).toMatchObject({ error: { code, type: expect.any(String), message: expect.any(String) } });
      expect(text).not.toContain('data: [DONE]');
      return;
    case 'responses':
      expect(event).toMatchObject({ type: 'error', code, message: expect.any(String) });
      expect(text).not.toContain('response.completed');
      return;
    case 'anthropic':
      expect(text.trim().split('\n\n').at(-1)).toMatch(/^event: error\n/);
      expect(event).toMatchObject({ type: 'error', error: { code, type: expect.any(String), message: expect.any(String) } });
      expect(text).not.toContain('message_stop');
      return;
    case 'gemini':
      expect(event).toMatchObject({ error: { code: expect.any(Number), status: expect.any(String), message: expect.any(String) } });
      expect(JSON.stringify(event)).toContain(code);
      return;
    default: {
      const unknown: never = client;
      throw new Error(`unknown client ${String(unknown)}`);
    }
  }
}

/**
 * Opens a stream on `streamOn`, waits for its first bytes, makes the change through `changeOn`, and reads the rest.
 * Returns the whole text, the request id and how long after the change's answer the stream ended.
 */
/**
 * Starts measuring how long this process's event loop could not run at all: the lateness of a 10 ms timer beyond
 * 5 ms of jitter, summed. The gateways run in this process, so a loaded machine that leaves it unscheduled delays
 * their reaction by that much; the returned function stops the timer and gives the total (ms).
 */
function loopStalls(): () => number {
  let stalledMs = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    stalledMs += Math.max(0, now - last - 15);
    last = now;
  }, 10);
  return () => {
    clearInterval(timer);
    return stalledMs + Math.max(0, performance.now() - last - 15);
  };
}

/** The caller's stream ends within END_WITHIN_MS of the change's answer, not counting what the machine stalled this process. */
function expectEndedInTime(endedAfterMs: number, stalledMs: number): void {
  expect(endedAfterMs - stalledMs, `ended ${endedAfterMs} ms after the change, ${stalledMs.toFixed(0)} ms of it with the loop stalled`).toBeLessThan(END_WITHIN_MS);
}

async function stopMidStream(streamOn: TestGateway, changeOn: TestGateway, testCase: Case, model: string, account: SeededAccount): Promise<{ text: string; requestId: string; endedAfterMs: number; stalledMs: number }> {
  const response = await streamRequest(streamOn, testCase.client, model, account.key);
  expect(response.status).toBe(200);
  const requestId = response.headers.get('x-request-id') ?? '';
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!ANSWER_TEXT[testCase.client].test(text)) {
    const chunk = await reader.read();
    if (chunk.done) throw new Error(`the stream ended before the change: ${text}`);
    text += decoder.decode(chunk.value, { stream: true });
  }
  await testCase.stop(changeOn, account);
  const changedAt = Date.now();
  const stalls = loopStalls();
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  return { text, requestId, endedAfterMs: Date.now() - changedAt, stalledMs: stalls() };
}

describe('one gateway', () => {
  let gateway: TestGateway;
  const upstreams = new Map<Family, { mock: AnyUpstream; tap: ConnectionTap }>();

  beforeAll(async () => {
    gateway = await startTestGateway();
    for (const kind of ['openai', 'anthropic', 'gemini'] as const) {
      const mock = await startUpstream(kind, { chunkDelayMs: DRIP_MS });
      const tap = await startTap(mock.port);
      upstreams.set(kind, { mock, tap });
      await addRoutedModel(gateway, { model: `stop-${kind}`, channel: channelFor({ kind, url: tap.url(kind === 'openai' ? '/v1' : '') }, `stop-${kind}`, `stop-${kind}`) });
    }
  });

  afterAll(async () => {
    await gateway?.close();
    for (const { mock, tap } of upstreams.values()) {
      await tap.close();
      await mock.close();
    }
  });

  it.each(CASES)('$client stream: $code ends it within a second with the family\'s error event, billed for what was delivered', async (testCase) => {
    const account = await seedAccount(gateway, { balanceUsd: 5 });
    const { tap } = upstreams.get(testCase.upstream)!;
    const { text, requestId, endedAfterMs, stalledMs } = await stopMidStream(gateway, gateway, testCase, `stop-${testCase.upstream}`, account);
    expectEndedInTime(endedAfterMs, stalledMs);
    expectFamilyError(testCase.client, text, testCase.code);
    // The upstream connection is closed too, not left to run on.
    await expect.poll(() => tap.open(), { timeout: END_WITHIN_MS, interval: 10 }).toBe(0);
    await expect.poll(async () => (await usageRow(gateway, account.keyId, requestId))?.status, { timeout: 10_000 }).toBe(testCase.status);
    const row = (await usageRow(gateway, account.keyId, requestId))!;
    expect(row.error_code).toBe(testCase.code);
    expect(row.completion_tokens).toBeGreaterThan(0);
    expect(row.cost_usd).toBeGreaterThan(0);
    // A new request is refused the same way.
    expect((await streamRequest(gateway, testCase.client, `stop-${testCase.upstream}`, account.key)).status).toBe(testCase.status);
  });

  it('a change that leaves the key usable (a rename, a higher quota) lets the stream run on', async () => {
    const account = await seedAccount(gateway, { balanceUsd: 5 });
    const response = await streamRequest(gateway, 'chat', 'stop-openai', account.key);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    while (!ANSWER_TEXT.chat.test(text)) text += decoder.decode((await reader.read()).value, { stream: true });
    await patchKey({ name: 'renamed', quota_usd: 4 })(gateway, account);
    // Several more chunks arrive after the change, none of them an error.
    const before = text.length;
    const until = Date.now() + 3 * DRIP_MS;
    while (Date.now() < until) {
      const chunk = await reader.read();
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
    expect(text.length).toBeGreaterThan(before);
    expect(text.slice(before)).not.toContain('"error"');
    await reader.cancel();
  });
});

describe.skipIf(!redisServerAvailable())('two gateways on one database and one Redis', () => {
  let redis: PrivateRedisServer;
  let first: TestGateway;
  let second: TestGateway;
  let upstream: AnyUpstream;

  beforeAll(async () => {
    redis = await startPrivateRedisServer(await freePort());
    await redis.start();
    const shared = { REDIS_URL: redis.url, SECRET_KEY: randomBytes(32).toString('hex') };
    first = await startTestGateway({ env: shared });
    second = await startTestGateway({ env: { ...shared, DATABASE_URL: first.databaseUrl } });
    upstream = await startUpstream('openai', { chunkDelayMs: DRIP_MS });
    await addRoutedModel(first, { model: 'stop-pair', channel: channelFor(upstream, 'stop-pair', 'stop-pair') });
  }, 60_000);

  afterAll(async () => {
    await second?.close();
    await first?.close();
    await upstream?.close();
    await redis?.destroy();
  });

  it('a key revoked through one ends its stream on the other within a second', async () => {
    const account = await seedAccount(first, { balanceUsd: 5 });
    const testCase = CASES[0]!;
    const { text, requestId, endedAfterMs, stalledMs } = await stopMidStream(first, second, testCase, 'stop-pair', account);
    expectEndedInTime(endedAfterMs, stalledMs);
    expectFamilyError('chat', text, 'revoked_api_key');
    await expect.poll(async () => (await usageRow(first, account.keyId, requestId))?.error_code, { timeout: 10_000 }).toBe('revoked_api_key');
  });
});
