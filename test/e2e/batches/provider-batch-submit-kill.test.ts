/**
 * A real `unigate serve` process killed with SIGKILL after the provider made its batch but before the process
 * recorded the provider's id (the mock holds its answer to the creation), then a second process on the same
 * database: for OpenAI's Batch API, Anthropic's Message Batches and Gemini's batch mode, the second process finds the
 * batch the first one submitted instead of submitting it again (the provider holds exactly one), runs it to its end,
 * and charges every line exactly once at the batch price; the batch's hold is released and the ledger balances.
 */
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, JobState } from '@google/genai';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { killAll, waitUntil } from '../cli/cli-process.js';
import { queryClusterDatabase, startServeCluster, type ServeCluster } from '../serve-cluster.js';

const LINES = 6;
/** How long the mocks hold their answer to a batch's creation: the kill lands inside it. */
const HOLD_MS = 20_000;

let openai: MockOpenAIUpstream;
let anthropic: MockAnthropicUpstream;
let gemini: MockGeminiUpstream;
let cluster: ServeCluster;

const query = (sqlText: string, parameters: string[]) => queryClusterDatabase(cluster.databaseUrl, sqlText, parameters);

const big = (value: unknown): bigint => BigInt(value as bigint | number | string);

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([
    startMockOpenAIUpstream({ batchCreateHoldMs: HOLD_MS }), startMockAnthropicUpstream({ batchCreateHoldMs: HOLD_MS }), startMockGeminiUpstream({ batchCreateHoldMs: HOLD_MS }),
  ]);
  const pricing = '{ input_per_mtok: 2, output_per_mtok: 8, batch_input_per_mtok: 1, batch_output_per_mtok: 4 }';
  cluster = await startServeCluster(0, [
    'models:',
    `  - { id: sk-gpt, pricing: ${pricing} }`,
    `  - { id: sk-claude, pricing: ${pricing} }`,
    `  - { id: sk-gemini, pricing: ${pricing} }`,
    'channels:',
    `  - { name: sk-openai, type: openai, base_url: "${openai.url}", api_key: sk-upstream-test, models: { sk-gpt: gpt-4o-mini } }`,
    `  - { name: sk-anthropic, type: anthropic, base_url: "${anthropic.url}", api_key: sk-ant-upstream-test, models: { sk-claude: claude-sonnet-4-5 } }`,
    `  - { name: sk-gemini, type: gemini, base_url: "${gemini.url}", api_key: gemini-upstream-test, models: { sk-gemini: gemini-2.5-flash } }`,
  ], {
    BATCH_POLL_MS: '50',
    BATCH_PROVIDER_POLL_SECONDS: '1',
    BATCH_LINE_LEASE_SECONDS: '1',
    INSTANCE_STALE_SECONDS: '2',
  });
}, 90_000);

afterAll(async () => {
  killAll();
  await cluster?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

interface Vendor {
  name: string;
  /** Creates the batch through the vendor's SDK at `url`; answers the gateway batch id. */
  create(url: string, key: string): Promise<string>;
  /** Waits through the SDK at `url` until the batch has ended; answers how many lines succeeded. */
  finish(url: string, key: string, id: string): Promise<number>;
  /** The batches the provider holds. */
  upstreamCount(): number;
}

const prompt = (index: number): string => `Submit kill question number ${index}`;

const VENDORS: Vendor[] = [
  {
    name: 'OpenAI Batch API',
    async create(url, key) {
      const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 });
      const text = Array.from({ length: LINES }, (_, index) => `${JSON.stringify({ custom_id: `k-${index}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'sk-gpt', messages: [{ role: 'user', content: prompt(index) }], max_tokens: 12 } })}\n`).join('');
      const file = await client.files.create({ file: await toFile(Buffer.from(text), 'kill.jsonl'), purpose: 'batch' });
      return (await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).id;
    },
    async finish(url, key, id) {
      const client = new OpenAI({ apiKey: key, baseURL: `${url}/v1`, maxRetries: 0 });
      let batch = await client.batches.retrieve(id);
      await waitUntil(async () => ['completed', 'failed', 'expired', 'cancelled'].includes((batch = await client.batches.retrieve(id)).status), 100_000, 'the OpenAI batch ended');
      expect(batch.status).toBe('completed');
      return batch.request_counts?.completed ?? 0;
    },
    upstreamCount: () => openai.batches.batches.size,
  },
  {
    name: 'Anthropic Message Batches',
    async create(url, key) {
      const client = new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 });
      return (await client.messages.batches.create({ requests: Array.from({ length: LINES }, (_, index) => ({ custom_id: `k-${index}`, params: { model: 'sk-claude', max_tokens: 12, messages: [{ role: 'user' as const, content: prompt(index) }] } })) })).id;
    },
    async finish(url, key, id) {
      const client = new Anthropic({ apiKey: key, baseURL: url, maxRetries: 0 });
      let batch = await client.messages.batches.retrieve(id);
      await waitUntil(async () => (batch = await client.messages.batches.retrieve(id)).processing_status === 'ended', 100_000, 'the Message Batch ended');
      const results: string[] = [];
      for await (const result of await client.messages.batches.results(id)) results.push(`${result.custom_id}:${result.result.type}`);
      expect(results).toEqual(Array.from({ length: LINES }, (_, index) => `k-${index}:succeeded`));
      return batch.request_counts.succeeded;
    },
    upstreamCount: () => anthropic.batches.batches.size,
  },
  {
    name: 'Gemini batch mode',
    async create(url, key) {
      const client = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url } });
      const job = await client.batches.create({ model: 'sk-gemini', src: Array.from({ length: LINES }, (_, index) => ({ contents: [{ role: 'user', parts: [{ text: prompt(index) }] }], metadata: { key: `k-${index}` } })) });
      return (job.name as string).replace(/^batches\//, '');
    },
    async finish(url, key, id) {
      const client = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: url } });
      let job = await client.batches.get({ name: `batches/${id}` });
      await waitUntil(async () => [JobState.JOB_STATE_SUCCEEDED, JobState.JOB_STATE_FAILED, JobState.JOB_STATE_CANCELLED, JobState.JOB_STATE_EXPIRED].includes((job = await client.batches.get({ name: `batches/${id}` })).state as JobState), 100_000, 'the Gemini batch ended');
      expect(job.state).toBe(JobState.JOB_STATE_SUCCEEDED);
      const responses = job.dest?.inlinedResponses ?? [];
      expect(responses.map((entry) => entry.metadata?.key)).toEqual(Array.from({ length: LINES }, (_, index) => `k-${index}`));
      return responses.filter((entry) => entry.response !== undefined).length;
    },
    upstreamCount: () => gemini.batches.batches.size,
  },
];

describe('a gateway process killed between a provider batch\'s submit and recording its id', () => {
  for (const [index, vendor] of VENDORS.entries()) {
    it(`${vendor.name}: another process takes up the provider's batch instead of submitting it twice; each line charged once`, async () => {
      const victim = await cluster.start(`victim-${index}`, { INSTANCE_ID: `submit-victim-${index}` });
      const account = await cluster.admin<{ id: string }>('POST', '/admin/accounts', { email: `submit-kill-${index}@example.com` });
      const accountId = account.body.id;
      await cluster.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 5 });
      const key = (await cluster.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, {})).body.key;
      const [{ balance_nano: balanceBefore }] = await query('select balance_nano from accounts where id = $1', [accountId]) as [{ balance_nano: unknown }];

      const id = await vendor.create(victim.url, key);
      // The provider has made the batch; the gateway is still waiting for the answer to its creation.
      await waitUntil(async () => vendor.upstreamCount() === 1, 30_000, 'the provider made the batch');
      victim.process.kill();
      await victim.process.exited;
      const [atKill] = await query('select state, upstream_batch_id, submit_started_at from provider_batches where batch_id = $1', [id]);
      expect(atKill).toMatchObject({ state: 'submit', upstream_batch_id: null });
      expect(atKill?.submit_started_at).not.toBeNull();

      cluster.instances.splice(cluster.instances.indexOf(victim), 1);
      const survivor = await cluster.start(`survivor-${index}`, { INSTANCE_ID: `submit-survivor-${index}` });
      expect(await vendor.finish(survivor.url, key, id)).toBe(LINES);
      // Found, not submitted again.
      expect(vendor.upstreamCount()).toBe(1);
      const [recorded] = await query('select state, upstream_batch_id from provider_batches where batch_id = $1', [id]);
      expect(recorded?.state).toBe('done');
      expect(recorded?.upstream_batch_id).not.toBeNull();

      // One usage row and one ledger charge per line, at the batch price.
      let usage: Array<Record<string, unknown>> = [];
      let charges: Array<Record<string, unknown>> = [];
      await waitUntil(async () => {
        usage = await query('select request_id, prompt_tokens, completion_tokens, cost_nano, tags from usage_logs where account_id = $1', [accountId]);
        charges = await query('select request_id, amount_nano from ledger_entries where account_id = $1 and kind = $2', [accountId, 'usage']);
        return usage.length >= LINES && charges.length >= LINES;
      }, 10_000, 'usage rows and charges written');
      const lineIds = Array.from({ length: LINES }, (_, line) => `req_${id}_${line + 1}`).sort();
      expect(usage.map((row) => row.request_id).sort()).toEqual(lineIds);
      expect(charges.map((row) => row.request_id).sort()).toEqual(lineIds);
      let total = 0n;
      for (const row of usage) {
        const expected = big(row.prompt_tokens) * 1000n + big(row.completion_tokens) * 4000n;
        expect(big(row.prompt_tokens)).toBeGreaterThan(0n);
        expect(big(row.cost_nano)).toBe(expected);
        expect(JSON.parse(row.tags as string)).toMatchObject({ batch: id });
        expect(big((charges.find((entry) => entry.request_id === row.request_id) as Record<string, unknown>).amount_nano)).toBe(-expected);
        total += expected;
      }
      await waitUntil(async () => (await query('select instance_id from money_holds where instance_id = $1', [`batch:${id}`])).length === 0, 15_000, 'the batch\'s hold released');
      const [{ balance_nano: balanceAfter }] = await query('select balance_nano from accounts where id = $1', [accountId]) as [{ balance_nano: unknown }];
      expect(big(balanceBefore) - big(balanceAfter)).toBe(total);
      const check = await cluster.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${accountId}`);
      expect(check.body).toMatchObject({ ok: true, problems: [] });
      survivor.process.kill();
      await survivor.process.exited;
      cluster.instances.splice(cluster.instances.indexOf(survivor), 1);
    }, 180_000);
  }
});
