/**
 * The caller's provider preference over the wire: the OpenAI SDK sends it as an extra body field (`provider`),
 * other families in the `x-gateway-provider` header. It narrows and orders the model's channels; a malformed
 * object or one that leaves no channel is a 400 in the caller's error shape; the field never reaches an upstream
 * (the mock upstreams refuse unknown parameters like the real APIs do).
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';

const MODEL = 'preference-model';

describe('caller provider preference', () => {
  let gateway: TestGateway;
  let account: SeededAccount;
  let primary: MockOpenAIUpstream;
  let secondary: MockOpenAIUpstream;
  let claude: MockAnthropicUpstream;
  let client: OpenAI;

  beforeAll(async () => {
    [primary, secondary, claude] = await Promise.all([startMockOpenAIUpstream(), startMockOpenAIUpstream(), startMockAnthropicUpstream()]);
    gateway = await startTestGateway();
    account = await seedAccount(gateway, { balanceUsd: 50 });
    expect((await gateway.admin('POST', '/admin/models', { id: MODEL, pricing: { input_per_mtok: 1, output_per_mtok: 2 } })).status).toBe(201);
    const channels = [
      { name: 'Primary', type: 'openai', base_url: primary.url, api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' }, priority: 10 },
      { name: 'Secondary EU', type: 'openai', base_url: secondary.url, api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' }, priority: 5 },
      { name: 'claude-side', type: 'anthropic', base_url: claude.url, api_key: 'sk-ant-upstream-test', models: { [MODEL]: 'claude-sonnet-4-5' }, priority: 0 },
    ];
    for (const channel of channels) expect((await gateway.admin('POST', '/admin/channels', channel)).status).toBe(201);
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([primary?.close(), secondary?.close(), claude?.close()]);
  });

  /** How many requests each upstream received while `run` ran. */
  async function served(run: () => Promise<unknown>): Promise<{ primary: number; secondary: number; claude: number }> {
    const before = [primary.requests.length, secondary.requests.length, claude.requests.length];
    await run();
    return { primary: primary.requests.length - (before[0] as number), secondary: secondary.requests.length - (before[1] as number), claude: claude.requests.length - (before[2] as number) };
  }

  const ask = (provider: unknown, stream = false) => (stream
    ? client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], stream: true, provider } as OpenAI.ChatCompletionCreateParamsStreaming).then(async (events) => {
      for await (const _event of events) { /* drain */ }
    })
    : client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], provider } as OpenAI.ChatCompletionCreateParamsNonStreaming));

  it('without a preference the operator priority decides', async () => {
    expect(await served(() => ask(undefined))).toEqual({ primary: 1, secondary: 0, claude: 0 });
  });

  it('order puts the named channel first, ahead of priority, and the field is not forwarded upstream (pass-through)', async () => {
    expect(await served(() => ask({ order: ['secondary eu'] }))).toEqual({ primary: 0, secondary: 1, claude: 0 });
    expect(await served(() => ask({ order: ['secondary-eu'] }, true))).toEqual({ primary: 0, secondary: 1, claude: 0 });
    const forwarded = secondary.requests.at(-1)?.body as Record<string, unknown>;
    expect(forwarded.model).toBe('gpt-4o-mini');
    expect(forwarded).not.toHaveProperty('provider');
  });

  it('only narrows to a provider (matched by channel type or catalog provider), translated without a warning about the field', async () => {
    const before = claude.requests.length;
    const answer = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], provider: { only: ['Anthropic'] } } as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse();
    expect(claude.requests.length - before).toBe(1);
    expect(answer.response.headers.get('x-gateway-warnings') ?? '').not.toContain('provider');
    expect(claude.requests.at(-1)?.body).not.toHaveProperty('provider');
  });

  it('ignore removes channels; a preference that leaves none is a 400 in the OpenAI error shape', async () => {
    expect(await served(() => ask({ ignore: ['Primary', 'anthropic'] }))).toEqual({ primary: 0, secondary: 1, claude: 0 });
    const refused = await ask({ ignore: ['openai', 'anthropic'] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ code: 'bad_request', param: 'provider', type: 'invalid_request_error' });
  });

  it('a malformed preference is a 400 naming the field, before any upstream call', async () => {
    const result = await served(async () => {
      const refused = await ask({ sort: 'fastest' }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
      expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ param: 'provider.sort' });
    });
    expect(result).toEqual({ primary: 0, secondary: 0, claude: 0 });
  });

  it('/v1/responses reads the body\'s provider field too, and never forwards it', async () => {
    const result = await served(() => client.responses.create({ model: MODEL, input: 'hi', provider: { order: ['secondary eu'] } } as OpenAI.Responses.ResponseCreateParamsNonStreaming));
    expect(result).toEqual({ primary: 0, secondary: 1, claude: 0 });
    expect(secondary.requests.at(-1)?.body).not.toHaveProperty('provider');
  });

  it('the Anthropic family gives the same object in the x-gateway-provider header', async () => {
    const call = (header: string) => fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': account.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'x-gateway-provider': header },
      body: JSON.stringify({ model: MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const result = await served(async () => expect((await call(JSON.stringify({ order: ['claude-side'], sort: 'latency' }))).status).toBe(200));
    expect(result).toEqual({ primary: 0, secondary: 0, claude: 1 });
    const malformed = await call('{not json');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});
