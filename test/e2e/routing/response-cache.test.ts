/**
 * The response cache over the wire with the official SDKs: a repeated request is answered from the cache with the
 * same content, tool calls and usage while the upstream sees one request; streamed and unary answers replay each
 * other, across families; accounts do not share entries unless the model says so; Cache-Control no-cache and
 * no-store, the opt-out header and the TTL are honoured; hits are billed at the model's hit price and flagged in the
 * usage row; two gateways on one Redis share the cache.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { RedisFixture, TEST_REDIS_URL, testKeyPrefix } from '../../unit/limits/redis-test-support.js';

const CACHED = 'cache-model';
const PRICED = 'cache-priced';
const SHARED = 'cache-shared';
const PLAIN = 'cache-plain';
const WEATHER_TOOL: OpenAI.Chat.Completions.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
};

let gateway: TestGateway;
let upstream: MockOpenAIUpstream;
let account: SeededAccount;
let unique = 0;

/** A prompt no other test sends, so each test starts from an empty entry. */
function prompt(text: string): string {
  unique += 1;
  return `${text} (${unique})`;
}

function openai(key = account.key, target = gateway, headers: Record<string, string> = {}): OpenAI {
  return new OpenAI({ apiKey: key, baseURL: target.baseURL, maxRetries: 0, defaultHeaders: headers });
}

/** The store of a same-protocol answer is finished right after the caller has it; give it that turn. */
const settled = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 50));

async function channelFor(target: TestGateway, model: string, cache: Record<string, unknown> | undefined, pricing = { input_per_mtok: 2, output_per_mtok: 8 }): Promise<void> {
  const created = await target.admin('POST', '/admin/models', { id: model, pricing, ...(cache === undefined ? {} : { cache }) });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const channel = await target.admin('POST', '/admin/channels', { name: `ch-${model}`, type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [model]: 'gpt-4o-mini' } });
  expect(channel.status, JSON.stringify(channel.body)).toBe(201);
}

/** Text and tool calls of a streamed OpenAI answer, joined, with its usage chunk. */
async function collectStream(stream: AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>): Promise<{ text: string; toolCalls: Array<{ id: string; name: string; arguments: string }>; usage: unknown; finish: string | null }> {
  let text = '';
  let usage: unknown = null;
  let finish: string | null = null;
  const toolCalls: Array<{ id: string; name: string; arguments: string }> = [];
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (choice === undefined) continue;
    text += choice.delta.content ?? '';
    finish = choice.finish_reason ?? finish;
    for (const call of choice.delta.tool_calls ?? []) {
      const entry = (toolCalls[call.index] ??= { id: '', name: '', arguments: '' });
      entry.id += call.id ?? '';
      entry.name += call.function?.name ?? '';
      entry.arguments += call.function?.arguments ?? '';
    }
  }
  return { text, toolCalls, usage, finish };
}

/** Usage without the gateway's spliced cost (a hit may cost less than the original). */
function tokens(usage: unknown): unknown {
  const { cost: _cost, ...rest } = usage as Record<string, unknown>;
  return rest;
}

interface UsageRow { request_id: string; cost_usd: number; cache_hit: boolean; status: number; model: string }

async function usageRow(requestId: string | null, target = gateway): Promise<UsageRow> {
  await flushWrites(target);
  const rows = await target.admin<{ data: UsageRow[] }>('GET', `/admin/usage?limit=200`);
  const row = rows.body.data.find((entry) => entry.request_id === requestId);
  if (row === undefined) throw new Error(`no usage row for ${String(requestId)}`);
  return row;
}

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream();
  gateway = await startTestGateway();
  await channelFor(gateway, CACHED, { ttl_seconds: 60 });
  await channelFor(gateway, PRICED, { ttl_seconds: 60, hit_price: 0.25 });
  await channelFor(gateway, SHARED, { ttl_seconds: 60, shared: true });
  await channelFor(gateway, PLAIN, undefined);
  account = await seedAccount(gateway, { balanceUsd: 20 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('response cache', () => {
  it('a repeated request is a hit: same content bytes, tool calls and usage, one upstream request, billed 0 by default', async () => {
    const client = openai();
    const body = { model: CACHED, messages: [{ role: 'user' as const, content: prompt('call get_weather for Paris') }], tools: [WEATHER_TOOL], max_tokens: 60 };
    const before = upstream.requests.length;
    const first = await client.chat.completions.create(body).withResponse();
    expect(first.response.headers.get('x-gateway-cache')).toBe('miss');
    await settled();
    const second = await client.chat.completions.create(body).withResponse();
    expect(second.response.headers.get('x-gateway-cache')).toBe('hit');
    expect(upstream.requests.length - before).toBe(1);

    const original = first.data.choices[0]?.message;
    const replayed = second.data.choices[0]?.message;
    expect(original?.tool_calls?.length).toBe(1);
    // The mock gives every call a random id: the same id proves the answer is the stored one.
    expect(replayed?.tool_calls).toEqual(original?.tool_calls);
    expect(replayed?.content ?? null).toEqual(original?.content ?? null);
    expect(second.data.choices[0]?.finish_reason).toBe(first.data.choices[0]?.finish_reason);
    expect(tokens(second.data.usage)).toEqual(tokens(first.data.usage));
    expect(second.data.id).not.toBe(first.data.id);

    expect(second.response.headers.get('x-request-cost-usd')).toBe('0');
    const hitRow = await usageRow(second.response.headers.get('x-request-id'));
    expect(hitRow).toMatchObject({ cache_hit: true, status: 200, cost_usd: 0 });
    const missRow = await usageRow(first.response.headers.get('x-request-id'));
    expect(missRow.cache_hit).toBe(false);
    expect(missRow.cost_usd).toBeGreaterThan(0);
  });

  it('a unary original answers a streamed request, and a streamed original a unary one', async () => {
    const client = openai();
    const unaryFirst = { model: CACHED, messages: [{ role: 'user' as const, content: prompt('tell me a short story about caching') }], max_tokens: 40 };
    const before = upstream.requests.length;
    const original = await client.chat.completions.create(unaryFirst);
    await settled();
    const { data: stream, response } = await client.chat.completions.create({ ...unaryFirst, stream: true, stream_options: { include_usage: true } }).withResponse();
    expect(response.headers.get('x-gateway-cache')).toBe('hit');
    const replayed = await collectStream(stream);
    expect(replayed.text).toBe(original.choices[0]?.message.content);
    expect(replayed.finish).toBe(original.choices[0]?.finish_reason);
    expect(tokens(replayed.usage)).toEqual(tokens(original.usage));

    const streamFirst = { model: CACHED, messages: [{ role: 'user' as const, content: prompt('call get_weather for Oslo') }], tools: [WEATHER_TOOL], max_tokens: 40 };
    const streamed = await collectStream(await client.chat.completions.create({ ...streamFirst, stream: true, stream_options: { include_usage: true } }));
    expect(streamed.toolCalls.length).toBe(1);
    await settled();
    const unary = await client.chat.completions.create(streamFirst).withResponse();
    expect(unary.response.headers.get('x-gateway-cache')).toBe('hit');
    const calls = unary.data.choices[0]?.message.tool_calls?.map((call) => ({ id: call.id, name: call.type === 'function' ? call.function.name : '', arguments: call.type === 'function' ? call.function.arguments : '' }));
    expect(calls).toEqual(streamed.toolCalls);
    expect(tokens(unary.data.usage)).toEqual(tokens(streamed.usage));
    expect(upstream.requests.length - before).toBe(2);
  });

  it('a hit answers a client of another family (the Anthropic SDK after the OpenAI SDK)', async () => {
    const text = prompt('what is an exact-match cache');
    const before = upstream.requests.length;
    const original = await openai().chat.completions.create({ model: CACHED, messages: [{ role: 'user', content: text }], max_tokens: 50 });
    await settled();
    const anthropic = new Anthropic({ apiKey: account.key, baseURL: gateway.url, maxRetries: 0 });
    const { data: message, response } = await anthropic.messages.create({ model: CACHED, max_tokens: 50, messages: [{ role: 'user', content: text }] }).withResponse();
    expect(response.headers.get('x-gateway-cache')).toBe('hit');
    expect(upstream.requests.length - before).toBe(1);
    const replayed = message.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
    expect(replayed).toBe(original.choices[0]?.message.content);
    expect(message.usage.input_tokens).toBe(original.usage?.prompt_tokens);
    expect(message.usage.output_tokens).toBe(original.usage?.completion_tokens);
    // And streamed, through the Anthropic stream encoder.
    const events = await anthropic.messages.stream({ model: CACHED, max_tokens: 50, messages: [{ role: 'user', content: text }] }).finalMessage();
    expect(events.content.map((block) => (block.type === 'text' ? block.text : '')).join('')).toBe(original.choices[0]?.message.content);
    expect(events.usage.output_tokens).toBe(original.usage?.completion_tokens);
    expect(upstream.requests.length - before).toBe(1);
  });

  it('accounts do not share entries, unless the model shares its namespace', async () => {
    const other = await seedAccount(gateway, { balanceUsd: 5 });
    for (const [model, expected] of [[CACHED, 'miss'], [SHARED, 'hit']] as const) {
      const body = { model, messages: [{ role: 'user' as const, content: prompt('namespaces') }], max_tokens: 20 };
      const before = upstream.requests.length;
      await openai().chat.completions.create(body);
      await settled();
      const { response } = await openai(other.key).chat.completions.create(body).withResponse();
      expect(response.headers.get('x-gateway-cache'), model).toBe(expected);
      expect(upstream.requests.length - before, model).toBe(expected === 'hit' ? 1 : 2);
    }
  });

  it('no-cache skips the lookup but stores; no-store and x-gateway-cache: off bypass; the TTL header expires the entry', async () => {
    const body = { model: CACHED, messages: [{ role: 'user' as const, content: prompt('controls') }], max_tokens: 20 };
    const before = upstream.requests.length;
    await openai().chat.completions.create(body);
    await settled();
    const refreshed = await openai(account.key, gateway, { 'cache-control': 'no-cache' }).chat.completions.create(body).withResponse();
    expect(refreshed.response.headers.get('x-gateway-cache')).toBe('miss');
    expect(upstream.requests.length - before).toBe(2);
    await settled();
    const optOuts: Array<Record<string, string>> = [{ 'cache-control': 'no-store' }, { 'x-gateway-cache': 'off' }];
    for (const headers of optOuts) {
      const bypassed = await openai(account.key, gateway, headers).chat.completions.create(body).withResponse();
      expect(bypassed.response.headers.get('x-gateway-cache')).toBe('bypass');
    }
    expect(upstream.requests.length - before).toBe(4);
    // The entry no-cache stored answers a plain request.
    const hit = await openai().chat.completions.create(body).withResponse();
    expect(hit.response.headers.get('x-gateway-cache')).toBe('hit');
    expect(hit.data.choices[0]?.message.content).toBe(refreshed.data.choices[0]?.message.content);
    expect(upstream.requests.length - before).toBe(4);

    const short = { ...body, messages: [{ role: 'user' as const, content: prompt('short-lived') }] };
    await openai(account.key, gateway, { 'x-gateway-cache-ttl': '1' }).chat.completions.create(short);
    await settled();
    expect((await openai().chat.completions.create(short).withResponse()).response.headers.get('x-gateway-cache')).toBe('hit');
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect((await openai().chat.completions.create(short).withResponse()).response.headers.get('x-gateway-cache')).toBe('miss');

    const malformed = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', 'x-gateway-cache-ttl': 'soon' },
      body: JSON.stringify(body),
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: { param: string } }).error.param).toBe('x-gateway-cache-ttl');
  });

  it('a model without a policy caches only on request, and says nothing otherwise', async () => {
    const body = { model: PLAIN, messages: [{ role: 'user' as const, content: prompt('opt in') }], max_tokens: 20 };
    const plain = await openai().chat.completions.create(body).withResponse();
    expect(plain.response.headers.get('x-gateway-cache')).toBeNull();
    const asking = openai(account.key, gateway, { 'x-gateway-cache': 'on' });
    expect((await asking.chat.completions.create(body).withResponse()).response.headers.get('x-gateway-cache')).toBe('miss');
    await settled();
    expect((await asking.chat.completions.create(body).withResponse()).response.headers.get('x-gateway-cache')).toBe('hit');
  });

  it('a hit is billed the model\'s fraction of the original cost, exactly, in the ledger', async () => {
    const body = { model: PRICED, messages: [{ role: 'user' as const, content: prompt('priced hit with a longer prompt to cost something') }], max_tokens: 60 };
    const first = await openai().chat.completions.create(body).withResponse();
    await settled();
    const second = await openai().chat.completions.create(body).withResponse();
    expect(second.response.headers.get('x-gateway-cache')).toBe('hit');
    await flushWrites(gateway);
    const ledger = await gateway.admin<{ data: Array<{ kind: string; amount_usd: number; request_id: string | null }> }>('GET', `/admin/accounts/${account.accountId}/ledger?limit=200`);
    const charge = (id: string | null): bigint => {
      const entry = ledger.body.data.find((item) => item.kind === 'usage' && item.request_id === id);
      if (entry === undefined) throw new Error(`no charge for ${String(id)}`);
      return BigInt(Math.round(-entry.amount_usd * 1e9));
    };
    const original = charge(first.response.headers.get('x-request-id'));
    const hit = charge(second.response.headers.get('x-request-id'));
    expect(original).toBeGreaterThan(0n);
    expect(hit).toBe((original * 2500n) / 10_000n);
    expect(BigInt(Math.round(Number(second.response.headers.get('x-request-cost-usd')) * 1e9))).toBe(hit);
    expect((await usageRow(second.response.headers.get('x-request-id'))).cache_hit).toBe(true);
  });

  it('a hit carries its cost in its usage object, unary and streamed: the cost its header says and its usage row settles', async () => {
    const body = { model: PRICED, messages: [{ role: 'user' as const, content: prompt('priced hit that carries its cost in its usage') }], max_tokens: 60 };
    await openai().chat.completions.create(body);
    await settled();
    const unary = await openai().chat.completions.create(body).withResponse();
    expect(unary.response.headers.get('x-gateway-cache')).toBe('hit');
    const cost = (unary.data.usage as unknown as { cost?: number }).cost;
    expect(cost).toBeGreaterThan(0);
    expect(cost).toBe(Number(unary.response.headers.get('x-request-cost-usd')));
    const { data: stream, response } = await openai().chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } }).withResponse();
    expect(response.headers.get('x-gateway-cache')).toBe('hit');
    const streamed = await collectStream(stream);
    expect((streamed.usage as { cost?: number }).cost).toBe(cost);
    await flushWrites(gateway);
    expect((await usageRow(unary.response.headers.get('x-request-id'))).cost_usd).toBe(cost);
    expect((await usageRow(response.headers.get('x-request-id'))).cost_usd).toBe(cost);
  });

  it('the admin API validates, shows and clears a model\'s cache', async () => {
    expect((await gateway.admin<{ cache: unknown }>('GET', `/admin/models/${PRICED}`)).body.cache).toEqual({ ttl_seconds: 60, hit_price: 0.25, shared: false });
    for (const cache of [{ ttl_seconds: 0 }, { ttl_seconds: 10, hit_price: 1.5 }, { ttl_seconds: 10, hit_price: 0.00001 }, { ttl: 10 }]) {
      const refused = await gateway.admin<{ error: { param?: string } }>('PATCH', `/admin/models/${PLAIN}`, { cache });
      expect(refused.status, JSON.stringify(cache)).toBe(400);
    }
    expect((await gateway.admin('PATCH', `/admin/models/${PLAIN}`, { cache: { hit_price: 0.5 } })).status).toBe(400);
    const on = await gateway.admin<{ cache: unknown }>('PATCH', `/admin/models/${PLAIN}`, { cache: { ttl_seconds: 30 } });
    expect(on.body.cache).toEqual({ ttl_seconds: 30, hit_price: 0, shared: false });
    const merged = await gateway.admin<{ cache: unknown }>('PATCH', `/admin/models/${PLAIN}`, { cache: { hit_price: 0.1 } });
    expect(merged.body.cache).toEqual({ ttl_seconds: 30, hit_price: 0.1, shared: false });
    const off = await gateway.admin<{ cache: unknown }>('PATCH', `/admin/models/${PLAIN}`, { cache: null });
    expect(off.body.cache).toBeNull();
  });
});

describe.skipIf(TEST_REDIS_URL === undefined)('response cache on Redis', () => {
  const redis = new RedisFixture(TEST_REDIS_URL ?? '', testKeyPrefix());
  let first: TestGateway;
  let second: TestGateway;
  let payer: SeededAccount;

  beforeAll(async () => {
    // A lookup slower than the default 250 ms is a miss; on a loaded test machine a hit can take that long, so the
    // lookups here may take 10 s: what is tested is what is found, not how fast Redis answers.
    const shared = { REDIS_URL: redis.url, REDIS_KEY_PREFIX: redis.prefix, SECRET_KEY: 'response-cache-test-secret-key-0123456789', RESPONSE_CACHE_LOOKUP_TIMEOUT_MS: '10000' };
    first = await startTestGateway({ env: shared });
    await channelFor(first, 'redis-cached', { ttl_seconds: 60 });
    payer = await seedAccount(first, { balanceUsd: 5 });
    // The second instance shares the first's database and Redis.
    second = await startTestGateway({ env: { ...shared, DATABASE_URL: first.databaseUrl } });
  });

  afterAll(async () => {
    await second?.close();
    await first?.close();
    await redis.cleanUp();
  });

  it('an answer stored through one gateway is a hit on the other, in the same account', async () => {
    const body = { model: 'redis-cached', messages: [{ role: 'user' as const, content: prompt('shared through redis') }], max_tokens: 30 };
    const before = upstream.requests.length;
    const original = await openai(payer.key, first).chat.completions.create(body);
    // Stored in Redis just after the answer went out.
    await expect.poll(async () => (await redis.connect().keys(`${redis.prefix}response-cache:*`)).length, { timeout: 10_000, interval: 20 }).toBe(1);
    const { data, response } = await openai(payer.key, second).chat.completions.create(body).withResponse();
    expect(response.headers.get('x-gateway-cache')).toBe('hit');
    expect(data.choices[0]?.message.content).toBe(original.choices[0]?.message.content);
    expect(tokens(data.usage)).toEqual(tokens(original.usage));
    expect(upstream.requests.length - before).toBe(1);
    const keys = await redis.connect().keys(`${redis.prefix}response-cache:*`);
    expect(keys.length).toBe(1);
  });
});
