/**
 * Gemini's batch mode through the official @google/genai SDK: a batch of inlined requests across a Gemini, a Claude
 * and an OpenAI model (the last two translated), run by the gateway from the same queue as the other batches, polled
 * with `batches.get` to its end, each inlined response matched against the same request made on its own and each
 * request charged once at the batch price; validation; paging with the SDK's pager; cancel; delete; Gemini's key forms;
 * other accounts' and other APIs' batches.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { GoogleGenAI, JobState, type BatchJob, type InlinedRequest } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

const MODELS = { gemini: 'gb-gemini', anthropic: 'gb-claude', openai: 'gb-gpt' } as const;
/** USD per million tokens: normal, and the operator's batch prices (half). */
const PRICING = { input_per_mtok: 2, output_per_mtok: 8, batch_input_per_mtok: 1, batch_output_per_mtok: 4 };
const NANO_PER_TOKEN = { input: 1_000n, output: 4_000n };
const ENDED: readonly string[] = [JobState.JOB_STATE_SUCCEEDED, JobState.JOB_STATE_FAILED, JobState.JOB_STATE_CANCELLED, JobState.JOB_STATE_EXPIRED];

let gateway: TestGateway;
let openai: MockOpenAIUpstream;
let anthropic: MockAnthropicUpstream;
let gemini: MockGeminiUpstream;
let slow: MockAnthropicUpstream;
let account: SeededAccount;
let ai: GoogleGenAI;

interface UsageRow { request_id: string; model: string | null; status: number; prompt_tokens: number; completion_tokens: number; cost_usd: number }

const modelCycle = [MODELS.gemini, MODELS.anthropic, MODELS.openai] as const;

function requests(count: number, model?: string): InlinedRequest[] {
  return Array.from({ length: count }, (_, index) => ({
    model: model ?? modelCycle[index % 3] as string,
    contents: [{ role: 'user', parts: [{ text: `Line ${index}: say something about the number ${index}.` }] }],
    config: { maxOutputTokens: 50 },
    metadata: { key: `request-${index}` },
  }));
}

const genai = (key: string): GoogleGenAI => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });

async function waitFor(name: string, done: (job: BatchJob) => boolean, target = ai): Promise<BatchJob> {
  for (let attempt = 0; attempt < 600; attempt += 1) {
    const job = await target.batches.get({ name });
    if (done(job)) return job;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`batch ${name} did not end`);
}

const ended = (job: BatchJob): boolean => ENDED.includes(job.state as string);
const idOf = (job: BatchJob): string => (job.name as string).replace(/^batches\//, '');

async function usageRows(keyId: string): Promise<UsageRow[]> {
  await flushWrites(gateway);
  const rows: UsageRow[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 20; page += 1) {
    const usage: { body: { data: UsageRow[]; next_cursor: string | null } } = await gateway.admin('GET', `/admin/usage?key_id=${keyId}&limit=200${cursor === null ? '' : `&cursor=${cursor}`}`);
    rows.push(...usage.body.data);
    cursor = usage.body.next_cursor;
    if (cursor === null) break;
  }
  return rows;
}

async function balanceOf(accountId: string): Promise<bigint> {
  const stored = await gateway.gateway.services.storage.accounts.getById(accountId);
  return stored?.balanceNano ?? 0n;
}

async function raw(method: string, path: string, key: string | null, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method, headers: { ...(key === null ? {} : { 'x-goog-api-key': key }), 'content-type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: await response.json() as Record<string, unknown> };
}

beforeAll(async () => {
  [openai, anthropic, gemini, slow] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream(), startMockAnthropicUpstream({ responseDelayMs: 300 })]);
  // The gateway's own queue is under test: one-provider batches are not sent to the provider's batch API.
  gateway = await startTestGateway({ env: { BATCH_POLL_MS: '20', BATCH_CONCURRENCY: '4', BATCH_PROVIDER_PASS_THROUGH: 'off' } });
  await addRoutedModel(gateway, { model: MODELS.openai, pricing: PRICING, channel: { name: 'openai-up', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: { [MODELS.openai]: 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: MODELS.anthropic, pricing: PRICING, channel: { name: 'anthropic-up', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { [MODELS.anthropic]: 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: MODELS.gemini, pricing: PRICING, channel: { name: 'gemini-up', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { [MODELS.gemini]: 'gemini-2.5-flash' } } });
  await addRoutedModel(gateway, { model: 'gb-slow-claude', pricing: PRICING, channel: { name: 'slow-up', type: 'anthropic', base_url: slow.url, api_key: 'sk-ant-upstream-test', models: { 'gb-slow-claude': 'claude-sonnet-4-5' } } });
  account = await seedAccount(gateway, { balanceUsd: 50 });
  ai = genai(account.key);
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close(), slow?.close()]);
});

describe('gemini batches', () => {
  it('runs inlined requests across Gemini, Claude and OpenAI models, answered in request order, each charged once at the batch price', async () => {
    const input = requests(15);
    const balanceBefore = await balanceOf(account.accountId);
    const created = await ai.batches.create({ model: MODELS.gemini, src: input, config: { displayName: 'fifteen' } });
    expect(created.name).toMatch(/^batches\/genbatch_/);
    expect(created).toMatchObject({ displayName: 'fifteen', state: JobState.JOB_STATE_PENDING, model: `models/${MODELS.gemini}` });
    expect(created.dest).toBeUndefined();
    const job = await waitFor(created.name as string, ended);
    expect(job.state).toBe(JobState.JOB_STATE_SUCCEEDED);
    expect(Date.parse(job.endTime as string)).toBeGreaterThanOrEqual(Date.parse(job.createTime as string));
    await flushWrites(gateway);
    const balanceAfter = await balanceOf(account.accountId);

    const responses = job.dest?.inlinedResponses ?? [];
    expect(responses.map((entry) => entry.metadata)).toEqual(input.map((request) => request.metadata));
    for (const [index, entry] of responses.entries()) {
      expect(entry.error, `request ${index}`).toBeUndefined();
      const request = input[index] as InlinedRequest;
      // The same request made on its own answers the same (the mocks answer deterministically), with the same tokens.
      const single = await ai.models.generateContent({ model: request.model as string, contents: request.contents as never, config: request.config as never });
      expect(entry.response?.text).toBe(single.text);
      expect(entry.response?.text?.length).toBeGreaterThan(0);
      expect(entry.response?.usageMetadata?.promptTokenCount).toBe(single.usageMetadata?.promptTokenCount);
      expect(entry.response?.usageMetadata?.candidatesTokenCount).toBe(single.usageMetadata?.candidatesTokenCount);
    }

    // The raw operation, as Google writes it: the output both in the metadata and as the response, int64s as strings.
    const operation = await raw('GET', `/v1beta/${job.name as string}`, account.key);
    expect(operation.body).toMatchObject({
      name: job.name, done: true,
      metadata: { '@type': expect.stringContaining('GenerateContentBatch') as unknown, state: 'BATCH_STATE_SUCCEEDED', batchStats: { requestCount: '15', successfulRequestCount: '15' } },
      response: { '@type': expect.stringContaining('GenerateContentBatchOutput') as unknown },
    });
    expect((operation.body.response as { inlinedResponses: { inlinedResponses: unknown[] } }).inlinedResponses.inlinedResponses).toHaveLength(15);

    // One usage row per request, at the batch price; the wallet moved by exactly their sum.
    const rows = (await usageRows(account.keyId)).filter((row) => row.request_id.startsWith(`req_${idOf(job)}_`));
    expect(rows).toHaveLength(15);
    expect(new Set(rows.map((row) => row.model))).toEqual(new Set(Object.values(MODELS)));
    let total = 0n;
    for (const row of rows) {
      const expected = BigInt(row.prompt_tokens) * NANO_PER_TOKEN.input + BigInt(row.completion_tokens) * NANO_PER_TOKEN.output;
      expect(BigInt(Math.round(row.cost_usd * 1e9)), row.request_id).toBe(expected);
      total += expected;
    }
    expect(total).toBeGreaterThan(0n);
    expect(balanceBefore - balanceAfter).toBe(total);
  });

  it('reports a request the generateContent route refuses as an error Status, uncharged, and takes the key as ?key=', async () => {
    const body = {
      batch: {
        inputConfig: {
          requests: {
            requests: [
              { request: { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] } },
              { request: { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }], generationConfig: { temperature: 'hot' } }, metadata: { key: 'bad' } },
            ],
          },
        },
      },
    };
    const response = await fetch(`${gateway.url}/v1beta/models/${MODELS.gemini}:batchGenerateContent?key=${account.key}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(response.status).toBe(200);
    const created = await response.json() as { name: string; metadata: { state: string; batchStats: Record<string, string> } };
    expect(created.metadata).toMatchObject({ state: 'BATCH_STATE_PENDING', batchStats: { requestCount: '2', pendingRequestCount: '2' } });
    const job = await waitFor(created.name, ended);
    expect(job.state).toBe(JobState.JOB_STATE_SUCCEEDED);
    const [first, second] = job.dest?.inlinedResponses ?? [];
    expect(first?.metadata).toBeUndefined();
    expect(first?.response?.text?.length).toBeGreaterThan(0);
    expect(second).toMatchObject({ metadata: { key: 'bad' }, error: { code: 3 } });
    expect(second?.response).toBeUndefined();
    const rows = (await usageRows(account.keyId)).filter((row) => row.request_id.startsWith(`req_${idOf(job)}_`) && row.cost_usd > 0);
    expect(rows).toHaveLength(1);
  });

  it('pages the listing with the SDK\'s pager, newest first', async () => {
    const other = await seedAccount(gateway, { balanceUsd: 5 });
    const client = genai(other.key);
    const made: string[] = [];
    for (let index = 0; index < 3; index += 1) made.push((await client.batches.create({ model: MODELS.gemini, src: requests(1, MODELS.gemini) })).name as string);
    const pager = await client.batches.list({ config: { pageSize: 2 } });
    expect(pager.page.map((job) => job.name)).toEqual([made[2], made[1]]);
    expect(pager.hasNextPage()).toBe(true);
    const all: string[] = [];
    for await (const job of await client.batches.list({ config: { pageSize: 2 } })) all.push(job.name as string);
    expect(all).toEqual([made[2], made[1], made[0]]);
    for (const name of made) await waitFor(name, ended, client);
    expect((await raw('GET', '/v1beta/batches?pageSize=1001', other.key)).status).toBe(400);
    expect((await raw('GET', '/v1beta/batches?pageToken=nothing', other.key)).status).toBe(400);
  });

  it('refuses bad batches with Google\'s error objects, and queues nothing', async () => {
    const good = { request: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } };
    const refusals: Array<[string, unknown, string]> = [
      [MODELS.gemini, {}, 'batch'],
      [MODELS.gemini, { batch: { inputConfig: { requests: { requests: [] } } } }, 'batch.inputConfig.requests.requests'],
      [MODELS.gemini, { batch: { inputConfig: { requests: { requests: [good, { request: { contents: [] } }] } } } }, 'batch.inputConfig.requests.requests[1].request.contents'],
      [MODELS.gemini, { batch: { inputConfig: { requests: { requests: [{ ...good, metadata: 'x' }] } } } }, 'batch.inputConfig.requests.requests[0].metadata'],
      ['no-such-model', { batch: { inputConfig: { requests: { requests: [good] } } } }, 'batch.inputConfig.requests.requests[0].request.model'],
      [MODELS.gemini, { batch: { inputConfig: { requests: { requests: [good, { request: { ...good.request, model: 'models/no-such-model' } }] } } } }, 'batch.inputConfig.requests.requests[1].request.model'],
    ];
    const fresh = await seedAccount(gateway, { balanceUsd: 5 });
    for (const [model, body, field] of refusals) {
      const response = await raw('POST', `/v1beta/models/${model}:batchGenerateContent`, fresh.key, body);
      expect(response.status, field).toBe(400);
      const error = response.body.error as { status: string; message: string };
      expect(error.status, field).toBe('INVALID_ARGUMENT');
      expect(error.message.startsWith(`${field}:`), error.message).toBe(true);
    }
    expect((await genai(fresh.key).batches.list()).page).toEqual([]);
    // A key limited to some models may batch only those.
    const limited = await seedAccount(gateway, { key: { allowed_models: [MODELS.gemini] } });
    await expect(genai(limited.key).batches.create({ model: MODELS.gemini, src: requests(3) })).rejects.toMatchObject({ status: 403 });
    expect((await genai(limited.key).batches.list()).page).toEqual([]);
    await expect(genai(limited.key).batches.create({ model: MODELS.gemini, src: requests(2, MODELS.gemini) })).resolves.toMatchObject({ state: JobState.JOB_STATE_PENDING });
    // Without a valid key: Google's authentication error.
    const anonymous = await raw('GET', '/v1beta/batches', null);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error).toMatchObject({ status: 'UNAUTHENTICATED' });
    await expect(genai('wrong-key').batches.list()).rejects.toMatchObject({ status: 401 });
  });

  it('refuses a batch whose worst case the account cannot pay, and hides batches from other accounts and the other APIs', async () => {
    const poor = await seedAccount(gateway, { balanceUsd: 0.0001 });
    const costly = requests(30).map((request) => ({ ...request, config: { maxOutputTokens: 100_000 } }));
    await expect(genai(poor.key).batches.create({ model: MODELS.gemini, src: costly })).rejects.toMatchObject({ status: 402 });
    expect((await genai(poor.key).batches.list()).page).toEqual([]);

    const mine = (await ai.batches.list()).page[0] as BatchJob;
    await waitFor(mine.name as string, ended);
    for (const [method, path] of [['GET', `/v1beta/${mine.name as string}`], ['POST', `/v1beta/${mine.name as string}:cancel`], ['DELETE', `/v1beta/${mine.name as string}`]] as const) {
      const stolen = await raw(method, path, poor.key);
      expect(stolen.status, `${method} ${path}`).toBe(404);
      expect(stolen.body.error).toMatchObject({ status: 'NOT_FOUND' });
    }
    await expect(genai(poor.key).batches.get({ name: mine.name as string })).rejects.toMatchObject({ status: 404 });
    expect((await ai.batches.get({ name: mine.name as string })).state).toBe(JobState.JOB_STATE_SUCCEEDED);

    // A Message Batch is no Gemini batch, and a Gemini batch no Message Batch.
    const claude = new Anthropic({ apiKey: account.key, baseURL: gateway.url, maxRetries: 0 });
    const messageBatch = await claude.messages.batches.create({ requests: [{ custom_id: 'x', params: { model: MODELS.anthropic, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] } }] });
    expect((await raw('GET', `/v1beta/batches/${messageBatch.id}`, account.key)).status).toBe(404);
    const names: string[] = [];
    for await (const job of await ai.batches.list({ config: { pageSize: 100 } })) names.push(job.name as string);
    expect(names).not.toContain(`batches/${messageBatch.id}`);
    await expect(claude.messages.batches.retrieve(idOf(mine))).rejects.toMatchObject({ status: 404 });
    // On /v1/batches an OpenAI client (a Bearer key) reads OpenAI's batches only: no Gemini batch there.
    const openaiClient = new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });
    await expect(openaiClient.batches.retrieve(idOf(mine))).rejects.toMatchObject({ status: 404, error: { type: 'not_found_error' } });
    expect((await openaiClient.batches.list({ limit: 100 })).data.map((batch) => batch.id)).not.toContain(idOf(mine));
  });

  it('cancels a batch mid-way: requests not started are cancelled, never run nor charged; an ended batch can be deleted', async () => {
    const created = await ai.batches.create({ model: 'gb-slow-claude', src: requests(40, 'gb-slow-claude') });
    const name = created.name as string;
    const refused = await raw('DELETE', `/v1beta/${name}`, account.key);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ status: 'INVALID_ARGUMENT' });
    await waitFor(name, (job) => job.state === JobState.JOB_STATE_RUNNING);
    await ai.batches.cancel({ name });
    const job = await waitFor(name, ended);
    expect(job.state).toBe(JobState.JOB_STATE_CANCELLED);
    const responses = job.dest?.inlinedResponses ?? [];
    expect(responses).toHaveLength(40);
    expect(responses.map((entry) => entry.metadata)).toEqual(requests(40).map((request) => request.metadata));
    const ran = responses.filter((entry) => entry.response !== undefined).length;
    expect(ran).toBeGreaterThanOrEqual(1);
    expect(ran).toBeLessThan(40);
    expect(responses.filter((entry) => entry.error?.code === 1)).toHaveLength(40 - ran);
    const operation = await raw('GET', `/v1beta/${name}`, account.key);
    expect(operation.body).toMatchObject({ done: true, error: { code: 1 }, metadata: { state: 'BATCH_STATE_CANCELLED', batchStats: { requestCount: '40', failedRequestCount: String(40 - ran) } } });
    expect(operation.body.response).toBeUndefined();
    const rows = (await usageRows(account.keyId)).filter((row) => row.request_id.startsWith(`req_${idOf(job)}_`));
    expect(rows).toHaveLength(ran);

    await expect(ai.batches.delete({ name })).resolves.toBeTruthy();
    await expect(ai.batches.get({ name })).rejects.toMatchObject({ status: 404 });
    // The usage rows and charges of what ran stay.
    expect((await usageRows(account.keyId)).filter((row) => row.request_id.startsWith(`req_${idOf(job)}_`))).toHaveLength(ran);
  });
});
