/**
 * Fallback across models, over the wire with the official SDKs: when every channel of the model fails, when the
 * upstream says the request is over the model's context window, or when it refuses on content policy, the next
 * model of the chain answers (the model's operator fallbacks, or the caller's own `models` list / x-gateway-models
 * header). The answer names the model that answered (body and x-gateway-model header) and is billed at its price;
 * the usage row lists every attempt. Nothing falls back once a byte reached the caller, nor on a plain bad request.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';

/** The fallback model, dearer than every primary so the bill shows which answered: USD per million tokens. */
const BACKUP = 'fb-backup';
const BACKUP_PRICE = { input_per_mtok: 7, output_per_mtok: 11 };
const PRIMARY_PRICE = { input_per_mtok: 1, output_per_mtok: 2 };

const SERVER_ERROR = { kind: 'status', status: 500 } as const;
const CONTEXT_OVERFLOW = {
  kind: 'status',
  status: 400,
  body: { error: { message: "This model's maximum context length is 128000 tokens. However, your messages resulted in 190000 tokens.", type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } },
} as const;
const CONTENT_REFUSAL = {
  kind: 'status',
  status: 400,
  body: { error: { message: 'Your request was rejected as a result of our safety system.', type: 'invalid_request_error', param: null, code: 'content_policy_violation' } },
} as const;
const PLAIN_BAD_REQUEST = {
  kind: 'status',
  status: 400,
  body: { error: { message: "Invalid value for 'temperature'.", type: 'invalid_request_error', param: 'temperature', code: 'invalid_value' } },
} as const;

interface UsageRow {
  request_id: string;
  model: string;
  status: number;
  cost_usd: number;
  prompt_tokens: number;
  completion_tokens: number;
  attempts: number;
  attempted_channels: string[];
}

describe('fallback models', () => {
  let gateway: TestGateway;
  let account: SeededAccount;
  let openai: MockOpenAIUpstream;
  let anthropic: MockAnthropicUpstream;
  /** The channels of the primary models, one each, all on the OpenAI upstream. */
  const primaryChannels = new Set<string>();
  let backupChannel: string;
  let counter = 0;

  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream()]);
    gateway = await startTestGateway();
    account = await seedAccount(gateway, { balanceUsd: 50 });
    expect((await gateway.admin('POST', '/admin/models', { id: BACKUP, pricing: BACKUP_PRICE })).status).toBe(201);
    const backup = await gateway.admin<{ id: string }>('POST', '/admin/channels', { name: 'backup', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { [BACKUP]: 'claude-sonnet-4-5' } });
    expect(backup.status).toBe(201);
    backupChannel = backup.body.id;
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([openai?.close(), anthropic?.close()]);
  });

  /**
   * A fresh primary model with its own channel on the OpenAI upstream (so one scenario's failures never open the
   * breaker of another's), with the backup as its fallback unless told otherwise.
   */
  async function primaryModel(fallbacks: string[] = [BACKUP]): Promise<string> {
    counter += 1;
    const id = `fb-primary-${counter}`;
    expect((await gateway.admin('POST', '/admin/models', { id, pricing: PRIMARY_PRICE, fallbacks })).status).toBe(201);
    const channel = await gateway.admin<{ id: string }>('POST', '/admin/channels', { name: `primary-${counter}`, type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: { [id]: 'gpt-4o-mini' } });
    expect(channel.status).toBe(201);
    primaryChannels.add(channel.body.id);
    return id;
  }

  /** Runs `call` with the OpenAI upstream answering `fault`; counts the requests each upstream received. */
  async function withPrimaryFault<T>(fault: Parameters<MockOpenAIUpstream['setFault']>[0], call: () => Promise<T>): Promise<{ result: T; primary: number; backup: number }> {
    const before = [openai.requests.length, anthropic.requests.length];
    openai.setFault(fault);
    try {
      const result = await call();
      return { result, primary: openai.requests.length - (before[0] as number), backup: anthropic.requests.length - (before[1] as number) };
    } finally {
      openai.setFault(null);
    }
  }

  async function usageRow(requestId: string | null | undefined): Promise<UsageRow> {
    for (let attempt = 0; attempt < 40; attempt += 1) {
      await flushWrites(gateway);
      const rows = await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?key_id=${account.keyId}&limit=200`);
      const row = rows.body.data.find((item) => item.request_id === requestId);
      if (row !== undefined) return row;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`no usage row for ${String(requestId)}`);
  }

  /** What the ledger charged for one request, in nano-USD. */
  async function charged(requestId: string | null | undefined): Promise<bigint> {
    await flushWrites(gateway);
    const ledger = await gateway.admin<{ data: Array<{ kind: string; amount_usd: number; request_id: string | null }> }>('GET', `/admin/accounts/${account.accountId}/ledger?limit=200`);
    const entry = ledger.body.data.find((item) => item.kind === 'usage' && item.request_id === requestId);
    if (entry === undefined) throw new Error(`no usage entry for ${String(requestId)}`);
    return BigInt(Math.round(-entry.amount_usd * 1e9));
  }

  /** The backup's price of a usage, in nano-USD (USD per million tokens is nano-USD per thousandth of a token). */
  const backupCost = (prompt: number, completion: number): bigint => BigInt(prompt * BACKUP_PRICE.input_per_mtok * 1000 + completion * BACKUP_PRICE.output_per_mtok * 1000);

  /** The usage row and the charge of a request the backup answered after the primary's attempt(s). */
  async function expectBackupAnswered(requestId: string | null | undefined, prompt: number, completion: number): Promise<void> {
    const row = await usageRow(requestId);
    expect(row).toMatchObject({ model: BACKUP, status: 200, prompt_tokens: prompt, completion_tokens: completion });
    expect(primaryChannels.has(row.attempted_channels[0] as string)).toBe(true);
    expect(row.attempted_channels.at(-1)).toBe(backupChannel);
    expect(row.attempts).toBe(row.attempted_channels.length);
    expect(row.attempts).toBeGreaterThanOrEqual(2);
    const cost = backupCost(prompt, completion);
    expect(cost).toBeGreaterThan(0n);
    expect(BigInt(Math.round(row.cost_usd * 1e9))).toBe(cost);
    expect(await charged(requestId)).toBe(cost);
  }

  const openAIClient = (): OpenAI => new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });

  describe.each([
    ['a 5xx on every channel', SERVER_ERROR],
    ['an upstream context-length refusal', CONTEXT_OVERFLOW],
    ['an upstream content-policy refusal', CONTENT_REFUSAL],
  ])('after %s', (_name, fault) => {
    it('OpenAI SDK, not streamed: the backup answers, named in the body and header, billed at its price', async () => {
      const model = await primaryModel();
      const { result, backup } = await withPrimaryFault(fault, () => openAIClient().chat.completions.create({ model, messages: [{ role: 'user', content: 'hello there' }] }).withResponse());
      expect(backup).toBe(1);
      expect(result.data.model).toBe(BACKUP);
      expect(result.response.headers.get('x-gateway-model')).toBe(BACKUP);
      const usage = result.data.usage as OpenAI.CompletionUsage;
      expect(BigInt(Math.round(Number(result.response.headers.get('x-request-cost-usd')) * 1e9))).toBe(backupCost(usage.prompt_tokens, usage.completion_tokens));
      await expectBackupAnswered(result.response.headers.get('x-request-id'), usage.prompt_tokens, usage.completion_tokens);
    });

    it('OpenAI SDK, streamed: the backup streams the answer under its own name', async () => {
      const model = await primaryModel();
      const { result, backup } = await withPrimaryFault(fault, async () => {
        const { data: stream, response } = await openAIClient().chat.completions.create({ model, messages: [{ role: 'user', content: 'hello there' }], stream: true, stream_options: { include_usage: true } }).withResponse();
        let text = '';
        let usage: OpenAI.CompletionUsage | null | undefined = null;
        const models = new Set<string>();
        for await (const chunk of stream) {
          models.add(chunk.model);
          text += chunk.choices[0]?.delta.content ?? '';
          usage = chunk.usage ?? usage;
        }
        return { response, text, usage, models };
      });
      expect(backup).toBe(1);
      expect(result.text).not.toBe('');
      expect([...result.models]).toEqual([BACKUP]);
      expect(result.response.headers.get('x-gateway-model')).toBe(BACKUP);
      await expectBackupAnswered(result.response.headers.get('x-request-id'), result.usage?.prompt_tokens ?? -1, result.usage?.completion_tokens ?? -1);
    });

    it('Anthropic SDK, not streamed (the backup passes through): its answer names the backup', async () => {
      const model = await primaryModel();
      const client = new Anthropic({ apiKey: account.key, baseURL: gateway.url, maxRetries: 0 });
      const { result, backup } = await withPrimaryFault(fault, () => client.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hello there' }] }).withResponse());
      expect(backup).toBe(1);
      expect(result.data.model).toBe(BACKUP);
      expect(result.response.headers.get('x-gateway-model')).toBe(BACKUP);
      await expectBackupAnswered(result.response.headers.get('x-request-id'), result.data.usage.input_tokens, result.data.usage.output_tokens);
    });

    it('Anthropic SDK, streamed', async () => {
      const model = await primaryModel();
      const client = new Anthropic({ apiKey: account.key, baseURL: gateway.url, maxRetries: 0 });
      const { result, backup } = await withPrimaryFault(fault, async () => {
        const stream = client.messages.stream({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hello there' }] });
        const { response } = await stream.withResponse();
        const message = await stream.finalMessage();
        return { response, message };
      });
      expect(backup).toBe(1);
      expect(result.message.content.some((block) => block.type === 'text' && block.text !== '')).toBe(true);
      expect(result.response.headers.get('x-gateway-model')).toBe(BACKUP);
      await expectBackupAnswered(result.response.headers.get('x-request-id'), result.message.usage.input_tokens, result.message.usage.output_tokens);
    });

    it('Gemini SDK, not streamed and streamed', async () => {
      const genai = new GoogleGenAI({ apiKey: account.key, httpOptions: { baseUrl: gateway.url } });
      const unary = await withPrimaryFault(fault, async () => genai.models.generateContent({ model: await primaryModel(), contents: 'hello there' }));
      expect(unary.backup).toBe(1);
      expect(unary.result.modelVersion).toBe(BACKUP);
      expect(unary.result.sdkHttpResponse?.headers?.['x-gateway-model']).toBe(BACKUP);
      const meta = unary.result.usageMetadata;
      await expectBackupAnswered(unary.result.sdkHttpResponse?.headers?.['x-request-id'], meta?.promptTokenCount ?? -1, meta?.candidatesTokenCount ?? -1);

      const model = await primaryModel();
      const streamed = await withPrimaryFault(fault, async () => {
        const chunks = [];
        for await (const chunk of await genai.models.generateContentStream({ model, contents: 'hello there' })) chunks.push(chunk);
        return chunks;
      });
      expect(streamed.backup).toBe(1);
      const last = streamed.result.at(-1);
      expect(last?.sdkHttpResponse?.headers?.['x-gateway-model']).toBe(BACKUP);
      expect(streamed.result.map((chunk) => chunk.text ?? '').join('')).not.toBe('');
      await expectBackupAnswered(last?.sdkHttpResponse?.headers?.['x-request-id'], last?.usageMetadata?.promptTokenCount ?? -1, last?.usageMetadata?.candidatesTokenCount ?? -1);
    });
  });

  it('a plain bad request is the caller\'s answer: no fallback', async () => {
    const model = await primaryModel();
    const { result, backup } = await withPrimaryFault(PLAIN_BAD_REQUEST, () => openAIClient().chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error));
    expect(backup).toBe(0);
    expect(result).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('no fallback once the stream reached the caller: the in-stream error ends it', async () => {
    const model = await primaryModel();
    const { result, backup } = await withPrimaryFault({ kind: 'stream-error', afterChunks: 4 }, async () => {
      const stream = await openAIClient().chat.completions.create({ model, messages: [{ role: 'user', content: 'tell me a long story please' }], stream: true });
      let text = '';
      try {
        for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      } catch (error) {
        return { text, error };
      }
      return { text, error: null };
    });
    expect(backup).toBe(0);
    expect(result.text).not.toBe('');
    expect(result.error).toBeInstanceOf(OpenAI.APIError);
  });

  it('without a fallback the failure is answered as before', async () => {
    const model = await primaryModel([]);
    const { result, backup } = await withPrimaryFault(SERVER_ERROR, () => openAIClient().chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error));
    expect(backup).toBe(0);
    expect(result).toBeInstanceOf(OpenAI.InternalServerError);
    expect((result as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
  });

  describe('the caller\'s own models list', () => {
    it('OpenAI body `models` without `model`: the list is the chain, and the field never reaches an upstream', async () => {
      const model = await primaryModel([]);
      const { result, backup } = await withPrimaryFault(SERVER_ERROR, () => openAIClient().chat.completions.create({ models: [model, BACKUP], messages: [{ role: 'user', content: 'hi' }] } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse());
      expect(backup).toBe(1);
      expect(result.data.model).toBe(BACKUP);
      expect(openai.requests.at(-1)?.body).not.toHaveProperty('models');
      const usage = result.data.usage as OpenAI.CompletionUsage;
      await expectBackupAnswered(result.response.headers.get('x-request-id'), usage.prompt_tokens, usage.completion_tokens);
    });

    it('with `model` too, the model comes first; a healthy first model answers itself', async () => {
      const model = await primaryModel([]);
      const { result, primary, backup } = await withPrimaryFault(null, () => openAIClient().chat.completions.create({ model, models: [BACKUP], messages: [{ role: 'user', content: 'hi' }] } as OpenAI.ChatCompletionCreateParamsNonStreaming).withResponse());
      expect({ primary, backup }).toEqual({ primary: 1, backup: 0 });
      expect(result.response.headers.get('x-gateway-model')).toBe(model);
      expect((await usageRow(result.response.headers.get('x-request-id'))).model).toBe(model);
    });

    it('Anthropic family: the x-gateway-models header', async () => {
      const model = await primaryModel([]);
      const client = new Anthropic({ apiKey: account.key, baseURL: gateway.url, maxRetries: 0 });
      const { result, backup } = await withPrimaryFault(SERVER_ERROR, () => client.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-gateway-models': BACKUP } }).withResponse());
      expect(backup).toBe(1);
      expect(result.data.model).toBe(BACKUP);
      await expectBackupAnswered(result.response.headers.get('x-request-id'), result.data.usage.input_tokens, result.data.usage.output_tokens);
    });

    it('a malformed list is a 400 in the caller\'s family, before any upstream call', async () => {
      const model = await primaryModel([]);
      const before = openai.requests.length;
      for (const models of [[], 'fb-backup', [''], Array.from({ length: 9 }, () => BACKUP)]) {
        const refused = await openAIClient().chat.completions.create({ model, models, messages: [{ role: 'user', content: 'hi' }] } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
        expect((refused as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({ type: 'invalid_request_error' });
      }
      const unknown = await openAIClient().chat.completions.create({ model, models: ['no-such-model'], messages: [{ role: 'user', content: 'hi' }] } as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((error: unknown) => error);
      expect((unknown as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
      const client = new Anthropic({ apiKey: account.key, baseURL: gateway.url, maxRetries: 0 });
      const header = await client.messages.create({ model, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }, { headers: { 'x-gateway-models': `${BACKUP},,` } }).catch((error: unknown) => error);
      expect(header).toBeInstanceOf(Anthropic.BadRequestError);
      expect((header as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
      expect(openai.requests.length).toBe(before);
    });

    it('every listed model must be allowed for the key: a model it may not use is refused like a direct request', async () => {
      const model = await primaryModel([]);
      const limited = await seedAccount(gateway, { balanceUsd: 5, key: { allowed_models: [model] } });
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: limited.key, maxRetries: 0 });
      const before = openai.requests.length + anthropic.requests.length;
      const refused = await client.chat.completions.create({ model, models: [BACKUP], messages: [{ role: 'user', content: 'hi' }] } as OpenAI.ChatCompletionCreateParamsNonStreaming).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expect((refused as InstanceType<typeof OpenAI.APIError>).code).toBe('model_not_allowed');
      expect(openai.requests.length + anthropic.requests.length).toBe(before);
    });

    it('an operator fallback the key may not use is passed over, not refused', async () => {
      const model = await primaryModel();
      const limited = await seedAccount(gateway, { balanceUsd: 5, key: { allowed_models: [model] } });
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: limited.key, maxRetries: 0 });
      const { result, backup } = await withPrimaryFault(SERVER_ERROR, () => client.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).catch((error: unknown) => error));
      expect(backup).toBe(0);
      expect((result as InstanceType<typeof OpenAI.APIError>).status).toBe(502);
    });
  });

  describe('operator configuration', () => {
    it('the admin model API stores, shows and checks fallbacks', async () => {
      const model = await primaryModel();
      expect((await gateway.admin<{ fallbacks: string[] }>('GET', `/admin/models/${model}`)).body.fallbacks).toEqual([BACKUP]);
      const cleared = await gateway.admin<{ fallbacks: string[] }>('PATCH', `/admin/models/${model}`, { fallbacks: [] });
      expect(cleared.body.fallbacks).toEqual([]);
      const self = await gateway.admin<{ error: { param: string } }>('PATCH', `/admin/models/${model}`, { fallbacks: [BACKUP, model] });
      expect(self.status).toBe(400);
      expect(self.body.error.param).toBe('fallbacks.1');
      const missing = await gateway.admin<{ error: { param: string } }>('POST', '/admin/models', { id: 'fb-new', pricing: PRIMARY_PRICE, fallbacks: ['no-such-model'] });
      expect(missing.status).toBe(400);
      expect(missing.body.error.param).toBe('fallbacks.0');
      // A cycle is accepted: each model is tried at most once per request.
      expect((await gateway.admin('PATCH', `/admin/models/${BACKUP}`, { fallbacks: [model] })).status).toBe(200);
      expect((await gateway.admin('PATCH', `/admin/models/${model}`, { fallbacks: [BACKUP] })).status).toBe(200);
      const { result, primary, backup } = await withPrimaryFault(SERVER_ERROR, () => openAIClient().chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }).withResponse());
      expect(backup).toBe(1);
      expect(primary).toBeGreaterThanOrEqual(1);
      expect(result.data.model).toBe(BACKUP);
      expect((await gateway.admin('PATCH', `/admin/models/${BACKUP}`, { fallbacks: [] })).status).toBe(200);
    });
  });
});
