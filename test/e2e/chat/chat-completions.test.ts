import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

interface UsageRow {
  request_id: string;
  model: string;
  status: number;
  stream: boolean;
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  cost_usd: number;
  channel_id: string;
  attempts: number;
  ttfb_ms: number | null;
}

describe('POST /v1/chat/completions through the openai SDK to an OpenAI upstream', () => {
  let gateway: TestGateway;
  let upstream: MockOpenAIUpstream;
  let account: SeededAccount;
  let client: OpenAI;
  let channelId: string;

  beforeAll(async () => {
    upstream = await startMockOpenAIUpstream();
    gateway = await startTestGateway();
    // Public id `house-model` maps to the upstream's own `gpt-4o-mini`; prices in USD per million tokens.
    ({ channelId } = await addRoutedModel(gateway, {
      model: 'house-model',
      pricing: { input_per_mtok: 2, output_per_mtok: 8, cached_input_per_mtok: 0.5 },
      channel: { name: 'openai-main', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { 'house-model': 'gpt-4o-mini' } },
    }));
    account = await seedAccount(gateway, { balanceUsd: 10 });
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  async function usageRow(requestId: string): Promise<UsageRow> {
    await flushWrites(gateway);
    const { body } = await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?key_id=${account.keyId}&limit=200`);
    const row = body.data.find((candidate) => candidate.request_id === requestId);
    if (row === undefined) throw new Error(`no usage row for ${requestId}`);
    return row;
  }

  it('answers a plain completion in the chat.completion shape, with the model mapped upstream', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'house-model', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Say hello' }] })
      .withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.choices[0]?.message.role).toBe('assistant');
    expect(data.choices[0]?.message.content).toContain('hello');
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.usage?.total_tokens).toBe((data.usage?.prompt_tokens ?? 0) + (data.usage?.completion_tokens ?? 0));
    const sent = upstream.requests.at(-1);
    expect(sent?.path).toBe('/v1/chat/completions');
    expect((sent?.body as { model: string }).model).toBe('gpt-4o-mini');
    expect(sent?.headers.authorization).toBe('Bearer sk-upstream-test');
    expect(response.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('forwards standard fields it does not act on untouched, and never the caller key', async () => {
    await client.chat.completions.create({
      model: 'house-model',
      messages: [{ role: 'user', content: 'fields' }],
      seed: 42,
      logit_bias: { '50256': -100 },
      metadata: { team: 'search' },
      user: 'end-user-7',
      temperature: 0.3,
      max_completion_tokens: 50,
    });
    const sent = upstream.requests.at(-1);
    expect(sent?.body).toMatchObject({ seed: 42, logit_bias: { '50256': -100 }, metadata: { team: 'search' }, user: 'end-user-7', temperature: 0.3, max_completion_tokens: 50 });
    expect(sent?.rawBody).not.toContain(account.key);
    expect(JSON.stringify(sent?.headers)).not.toContain(account.key);
  });

  it('bills exactly the upstream usage at the model price and logs one metadata row', async () => {
    const before = (await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${account.accountId}`)).body.balance_usd;
    upstream.setUsageOverride({ prompt_tokens: 1000, completion_tokens: 500, cached_tokens: 400 });
    const { data, response } = await client.chat.completions.create({ model: 'house-model', messages: [{ role: 'user', content: 'bill me' }] }).withResponse();
    upstream.setUsageOverride(null);
    expect(data.usage?.prompt_tokens).toBe(1000);
    const row = await usageRow(response.headers.get('x-request-id') ?? '');
    // 600 uncached × $2/M + 400 cached × $0.5/M + 500 out × $8/M = 0.0012 + 0.0002 + 0.004
    expect(row.cost_usd).toBe(0.0054);
    expect(row).toMatchObject({ model: 'house-model', status: 200, prompt_tokens: 1000, completion_tokens: 500, cached_tokens: 400, channel_id: channelId, attempts: 1, stream: false });
    const after = (await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${account.accountId}`)).body.balance_usd;
    expect(Math.round((before - after) * 1e9)).toBe(5_400_000);
  });

  it('streams chunks that finalChatCompletion() assembles, and bills the streamed usage', async () => {
    const stream = client.chat.completions.stream({ model: 'house-model', messages: [{ role: 'user', content: 'Tell me a short story about streams' }] });
    const deltas: string[] = [];
    stream.on('content', (delta) => deltas.push(delta));
    const final = await stream.finalChatCompletion();
    expect(deltas.length).toBeGreaterThan(1);
    expect(final.choices[0]?.message.content).toBe(deltas.join(''));
    expect(final.choices[0]?.finish_reason).toBe('stop');
    const sent = upstream.requests.at(-1)?.body as { stream: boolean; stream_options: { include_usage: boolean } };
    expect(sent.stream).toBe(true);
    expect(sent.stream_options.include_usage).toBe(true);
  });

  it('drops the usage chunk it asked for when the caller did not ask, and keeps it when it did', async () => {
    const plain = await client.chat.completions.create({ model: 'house-model', stream: true, messages: [{ role: 'user', content: 'count chunks' }] }).withResponse();
    const plainChunks = [];
    for await (const chunk of plain.data) plainChunks.push(chunk);
    expect(plainChunks.every((chunk) => chunk.choices.length > 0)).toBe(true);
    const plainRow = await usageRow(plain.response.headers.get('x-request-id') ?? '');
    expect(plainRow.completion_tokens).toBeGreaterThan(0);
    expect(plainRow.prompt_tokens).toBeGreaterThan(0);
    expect(plainRow.stream).toBe(true);
    expect(plainRow.ttfb_ms).not.toBeNull();

    const withUsage = await client.chat.completions.create({
      model: 'house-model', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'count chunks' }],
    });
    const chunks = [];
    for await (const chunk of withUsage) chunks.push(chunk);
    const last = chunks.at(-1);
    expect(last?.choices).toEqual([]);
    expect(last?.usage?.completion_tokens).toBe(plainRow.completion_tokens);
  });

  it('carries a tool call round trip, streamed tool arguments included', async () => {
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [{
      type: 'function',
      function: { name: 'get_weather', description: 'Weather for a city', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
    }];
    const first = await client.chat.completions.create({ model: 'house-model', tools, messages: [{ role: 'user', content: 'What is the weather in Paris?' }] });
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(first.choices[0]?.finish_reason).toBe('tool_calls');
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') throw new Error('expected a function call');
    expect(JSON.parse(call.function.arguments)).toEqual({ location: 'Paris' });

    const streamed = await client.chat.completions.stream({ model: 'house-model', tools, messages: [{ role: 'user', content: 'What is the weather in Paris?' }] }).finalChatCompletion();
    const streamedCall = streamed.choices[0]?.message.tool_calls?.[0];
    if (streamedCall?.type !== 'function') throw new Error('expected a streamed function call');
    expect(JSON.parse(streamedCall.function.arguments)).toEqual({ location: 'Paris' });

    const second = await client.chat.completions.create({
      model: 'house-model',
      tools,
      messages: [
        { role: 'user', content: 'What is the weather in Paris?' },
        first.choices[0]!.message,
        { role: 'tool', tool_call_id: call.id, content: '{"temperature_c":18}' },
      ],
    });
    expect(second.choices[0]?.finish_reason).toBe('stop');
    const sentMessages = (upstream.requests.at(-1)?.body as { messages: Array<{ role: string; tool_call_id?: string }> }).messages;
    expect(sentMessages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: call.id });
  });

  it('passes an image part through unchanged (vision)', async () => {
    const image = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==';
    await client.chat.completions.create({
      model: 'house-model',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: image, detail: 'low' } }] }],
    });
    const sent = upstream.requests.at(-1)?.body as { messages: Array<{ content: unknown }> };
    expect(sent.messages[0]?.content).toEqual([{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: image, detail: 'low' } }]);
  });

  it('answers 400 naming the bad field before any upstream call', async () => {
    const before = upstream.requests.length;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ messages: [{ role: 'user', content: 'x' }] }, 'model'],
      [{ model: 'house-model', messages: [] }, 'messages'],
      [{ model: 'house-model', messages: [{ role: 'wizard', content: 'x' }] }, 'messages[0].role'],
      [{ model: 'house-model', messages: [{ role: 'user', content: 'x' }], temperature: 2.5 }, 'temperature'],
      [{ model: 'house-model', messages: [{ role: 'user', content: 'x' }], max_tokens: 0 }, 'max_tokens'],
      [{ model: 'house-model', messages: [{ role: 'user', content: 'x' }], stream: 'yes' }, 'stream'],
      [{ model: 'no-such-model', messages: [{ role: 'user', content: 'x' }] }, 'model'],
    ];
    for (const [body, param] of cases) {
      const error = await client.chat.completions.create(body as never).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      const apiError = error as InstanceType<typeof OpenAI.BadRequestError>;
      expect(apiError.status).toBe(400);
      expect(apiError.param).toBe(param);
      expect(typeof apiError.message).toBe('string');
      expect(typeof apiError.type).toBe('string');
      expect(typeof apiError.code).toBe('string');
    }
    expect(upstream.requests.length).toBe(before);
  });

  it('relays an upstream 400 as a 400 with the upstream message, not retried', async () => {
    const before = upstream.requests.length;
    upstream.setFault({ kind: 'status', status: 400, body: { error: { message: "Invalid value for 'seed'.", type: 'invalid_request_error', param: 'seed', code: 'invalid_value' } }, times: 1 });
    const error = await client.chat.completions.create({ model: 'house-model', messages: [{ role: 'user', content: 'x' }] }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).message).toContain("Invalid value for 'seed'");
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('seed');
    expect(upstream.requests.length).toBe(before + 1);
  });

  it('hides an upstream credential failure behind a 502 without the upstream key or URL', async () => {
    upstream.setFault({ kind: 'status', status: 401, body: { error: { message: 'Incorrect API key provided: sk-upstr*********test. You can find your API key at https://platform.openai.com/account/api-keys.', type: 'invalid_request_error', code: 'invalid_api_key' } }, times: 1 });
    const response = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'house-model', messages: [{ role: 'user', content: 'x' }] }),
    });
    const text = await response.text();
    expect(response.status).toBe(502);
    expect(JSON.parse(text).error.code).toBe('upstream_error');
    expect(text).not.toContain('sk-upstr');
    expect(text).not.toContain('127.0.0.1');
    expect(text).not.toContain('platform.openai.com');
  });

  it('ends a stream that breaks mid-way with an error event and bills what was delivered', async () => {
    upstream.setFault({ kind: 'cut-stream', afterChunks: 3, times: 1 });
    const response = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'house-model', stream: true, messages: [{ role: 'user', content: 'a long answer please, with many words in it' }] }),
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    const events = text.split('\n\n').filter((event) => event.startsWith('data: '));
    const last = JSON.parse(events.at(-1)!.slice(6)) as { error: { code: string; type: string; message: string } };
    expect(last.error.code).toBe('upstream_error');
    expect(text).not.toContain('[DONE]');
    const row = await usageRow(response.headers.get('x-request-id') ?? '');
    expect(row.status).toBe(502);
    expect(row.completion_tokens).toBeGreaterThan(0);
    expect(row.cost_usd).toBeGreaterThan(0);
  });
});
