/**
 * One OpenAI-format batch across three providers, split: the lines naming the OpenAI model go to the OpenAI channel's
 * Batch API (one model per provider batch, as OpenAI requires), the lines naming the Claude model and the Gemini model
 * run on the gateway's own queue (translated). The Anthropic channel's `provider_batches: false` keeps its lines here
 * in the in-process tests; Gemini's batch mode takes only Gemini-format batches, so an OpenAI-format line for a Gemini
 * model has no provider batch API. The kill test leaves the Anthropic channel's pass-through on: a batch has one
 * provider part, so the Claude lines still run on the queue. Under one batch id: one hold, one results file and one
 * error file in line order, counts and cost summed, a cancel reaching both parts, and a process killed mid-batch
 * whose work another process finishes without running or charging a line twice.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchHolder } from '../../../src/billing/money-pools.js';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { killAll, waitUntil } from '../cli/cli-process.js';
import { queryClusterDatabase, startServeCluster, type ServeCluster } from '../serve-cluster.js';

/** Batch prices per token in nano-dollars (USD per million tokens × 1000), each model its own. */
const NANO_PER_TOKEN = {
  gpt: { input: 1000n, output: 4000n },
  claude: { input: 1500n, output: 7500n },
  gemini: { input: 150n, output: 1250n },
} as const;
type Family = keyof typeof NANO_PER_TOKEN;
const FAMILIES: Family[] = ['gpt', 'claude', 'gemini'];
const pricing = (family: Family): Record<string, number> => ({
  // Normal prices twice the batch prices: a line charged at the normal price shows.
  input_per_mtok: Number(NANO_PER_TOKEN[family].input) / 500, output_per_mtok: Number(NANO_PER_TOKEN[family].output) / 500,
  batch_input_per_mtok: Number(NANO_PER_TOKEN[family].input) / 1000, batch_output_per_mtok: Number(NANO_PER_TOKEN[family].output) / 1000,
});
const familyOfLine = (index: number): Family => FAMILIES[index % 3] as Family;
const prompt = (index: number): string => `Mixed question number ${index}`;
const big = (value: unknown): bigint => BigInt(value as bigint | number | string);

function batchFile(models: Record<Family, string>, count: number): string {
  let text = '';
  for (let index = 0; index < count; index += 1) {
    const body = { model: models[familyOfLine(index)], messages: [{ role: 'user', content: prompt(index) }], max_tokens: 16 };
    text += `${JSON.stringify({ custom_id: `mix-${index}`, method: 'POST', url: '/v1/chat/completions', body })}\n`;
  }
  return text;
}

interface ResultLine {
  custom_id: string;
  response: { status_code: number; body: OpenAI.ChatCompletion } | null;
  error: { code: string; message: string } | null;
}

async function readResults(client: OpenAI, id: string | null | undefined): Promise<ResultLine[]> {
  if (id === null || id === undefined) return [];
  return (await (await client.files.content(id)).text()).trim().split('\n').map((entry) => JSON.parse(entry) as ResultLine);
}

const ENDED = ['completed', 'failed', 'expired', 'cancelled'];

async function ended(client: OpenAI, id: string, timeoutMs = 150_000): Promise<OpenAI.Batch> {
  let batch = await client.batches.retrieve(id);
  await waitUntil(async () => ENDED.includes((batch = await client.batches.retrieve(id)).status), timeoutMs, 'the batch ended');
  return batch;
}

const indexOf = (customId: string): number => Number(customId.slice('mix-'.length));
const lineOfRequest = (batchId: string, requestId: string): number => Number(requestId.slice(`req_${batchId}_`.length)) - 1;

describe('a mixed batch split between a provider batch and the gateway\'s queue', () => {
  let gateway: TestGateway;
  let openai: MockOpenAIUpstream;
  let anthropic: MockAnthropicUpstream;
  let gemini: MockGeminiUpstream;
  let slowOpenai: MockOpenAIUpstream;
  let slowAnthropic: MockAnthropicUpstream;
  let slowGemini: MockGeminiUpstream;

  const MODELS: Record<Family, string> = { gpt: 'mix-gpt', claude: 'mix-claude', gemini: 'mix-gemini' };
  const SLOW: Record<Family, string> = { gpt: 'slow-gpt', claude: 'slow-claude', gemini: 'slow-gemini' };

  beforeAll(async () => {
    [openai, anthropic, gemini, slowOpenai, slowAnthropic, slowGemini] = await Promise.all([
      startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream(),
      startMockOpenAIUpstream({ batchLineDelayMs: 250 }), startMockAnthropicUpstream({ responseDelayMs: 400 }), startMockGeminiUpstream({ responseDelayMs: 400 }),
    ]);
    gateway = await startTestGateway({ env: { BATCH_POLL_MS: '20', BATCH_PROVIDER_POLL_SECONDS: '1', BATCH_CONCURRENCY: '8' } });
    const add = async (models: Record<Family, string>, mocks: [MockOpenAIUpstream, MockAnthropicUpstream, MockGeminiUpstream], prefix: string): Promise<void> => {
      await addRoutedModel(gateway, { model: models.gpt, pricing: pricing('gpt'), channel: { name: `${prefix}-openai`, type: 'openai', base_url: mocks[0].url, api_key: 'sk-upstream-test', models: { [models.gpt]: 'gpt-4o-mini' } } });
      await addRoutedModel(gateway, { model: models.claude, pricing: pricing('claude'), channel: { name: `${prefix}-anthropic`, type: 'anthropic', base_url: mocks[1].url, api_key: 'sk-ant-upstream-test', models: { [models.claude]: 'claude-sonnet-4-5' }, settings: { provider_batches: false } } });
      await addRoutedModel(gateway, { model: models.gemini, pricing: pricing('gemini'), channel: { name: `${prefix}-gemini`, type: 'gemini', base_url: mocks[2].url, api_key: 'gemini-upstream-test', models: { [models.gemini]: 'gemini-2.5-flash' } } });
    };
    await add(MODELS, [openai, anthropic, gemini], 'mix');
    await add(SLOW, [slowOpenai, slowAnthropic, slowGemini], 'slow');
  }, 90_000);

  afterAll(async () => {
    await gateway?.close();
    await Promise.all([openai, anthropic, gemini, slowOpenai, slowAnthropic, slowGemini].map((mock) => mock?.close()));
  });

  interface UsageRow { request_id: string; prompt_tokens: number; completion_tokens: number; cost_usd: number; tags: Record<string, string>; channel_id: string | null }

  async function usageRows(account: SeededAccount, batchId: string): Promise<UsageRow[]> {
    await flushWrites(gateway);
    const answer = await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?key_id=${account.keyId}&limit=200`);
    return answer.body.data.filter((row) => row.request_id.startsWith(`req_${batchId}_`));
  }

  /** Each row at its model's batch price; their sum. */
  function priced(batchId: string, rows: readonly UsageRow[]): bigint {
    let total = 0n;
    for (const row of rows) {
      const price = NANO_PER_TOKEN[familyOfLine(lineOfRequest(batchId, row.request_id))];
      const expected = BigInt(row.prompt_tokens) * price.input + BigInt(row.completion_tokens) * price.output;
      expect(row.prompt_tokens, row.request_id).toBeGreaterThan(0);
      expect(BigInt(Math.round(row.cost_usd * 1e9)), row.request_id).toBe(expected);
      expect(row.tags).toMatchObject({ batch: batchId });
      total += expected;
    }
    return total;
  }

  async function holdOf(account: SeededAccount, batchId: string): Promise<bigint> {
    const holds = await gateway.gateway.services.storage.money.listHolds(account.accountId);
    return holds.filter((hold) => hold.instanceId === batchHolder(batchId)).reduce((sum, hold) => sum + hold.heldNano, 0n);
  }

  it('runs 100 lines across an OpenAI, a Claude and a Gemini model as one batch, matched line by line and charged at the batch price', async () => {
    const account = await seedAccount(gateway, { balanceUsd: 20 });
    const client = new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const before = await gateway.gateway.services.ledger.availableBalance(account.accountId);
    const file = await client.files.create({ file: await toFile(Buffer.from(batchFile(MODELS, 100)), 'mixed.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(created.status).toBe('in_progress');
    expect(await holdOf(account, created.id)).toBeGreaterThan(0n);

    const batch = await ended(client, created.id);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 100, completed: 100, failed: 0 });
    expect(batch.error_file_id ?? null).toBeNull();

    // The OpenAI lines went to OpenAI's Batch API as one provider batch of its one model; the others ran one by one.
    const gptLines = Array.from({ length: 100 }, (_, index) => index).filter((index) => familyOfLine(index) === 'gpt');
    const upstreamBatches = [...openai.batches.batches.values()].filter((entry) => entry.metadata?.unigate_batch === created.id);
    expect(upstreamBatches).toHaveLength(1);
    expect(upstreamBatches[0]).toMatchObject({ status: 'completed', model: 'gpt-4o-mini', request_counts: { total: gptLines.length, completed: gptLines.length, failed: 0 } });
    const sent = openai.batches.files.get(upstreamBatches[0]?.input_file_id as string)?.content.toString('utf8') ?? '';
    expect(sent.trim().split('\n').map((entry) => (JSON.parse(entry) as { custom_id: string }).custom_id)).toEqual(gptLines.map((index) => `mix-${index}`));
    // The mock's batch runner calls its own chat endpoint once per line: the gateway asked none of them directly.
    expect(openai.requests.filter((request) => request.path === '/v1/chat/completions')).toHaveLength(gptLines.length);
    expect(anthropic.batches.batches.size).toBe(0);
    expect(anthropic.requests.filter((request) => request.path === '/v1/messages')).toHaveLength(33);
    expect(gemini.batches.batches.size).toBe(0);
    expect(gemini.requests.filter((request) => request.path.endsWith(':generateContent'))).toHaveLength(33);

    // One results file, in line order, each answer the one to its own line.
    const output = await readResults(client, batch.output_file_id);
    expect(output.map((entry) => entry.custom_id)).toEqual(Array.from({ length: 100 }, (_, index) => `mix-${index}`));
    for (const entry of output) {
      expect(entry.response?.status_code).toBe(200);
      expect(entry.response?.body.object).toBe('chat.completion');
      expect(entry.response?.body.choices[0]?.message.content).toContain(prompt(indexOf(entry.custom_id)));
    }

    // One usage row per line at its model's batch price; the batch's cost, the balance and the ledger agree.
    const rows = await usageRows(account, created.id);
    expect(rows.map((row) => row.request_id).sort()).toEqual(Array.from({ length: 100 }, (_, index) => `req_${created.id}_${index + 1}`).sort());
    const total = priced(created.id, rows);
    const stored = await gateway.gateway.services.storage.batches.get(account.accountId, created.id);
    expect(stored?.costNano).toBe(total);
    expect(await holdOf(account, created.id)).toBe(0n);
    expect(before - await gateway.gateway.services.ledger.availableBalance(account.accountId)).toBe(total);
    const check = await gateway.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${account.accountId}`);
    expect(check.body).toMatchObject({ ok: true, problems: [] });
  }, 180_000);

  it('cancels both parts mid-way: lines run are charged, the rest are cancelled, the hold is released', async () => {
    const account = await seedAccount(gateway, { balanceUsd: 20 });
    const client = new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const before = await gateway.gateway.services.ledger.availableBalance(account.accountId);
    const count = 60;
    const file = await client.files.create({ file: await toFile(Buffer.from(batchFile(SLOW, count)), 'cancel.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });

    // Cancelled once the provider has run some of its lines and the queue has finished some of its own.
    const upstream = (): { status: string; request_counts: { completed: number } } | undefined => [...slowOpenai.batches.batches.values()].find((entry) => entry.metadata?.unigate_batch === created.id);
    await waitUntil(async () => (upstream()?.request_counts.completed ?? 0) >= 2 && ((await client.batches.retrieve(created.id)).request_counts?.completed ?? 0) >= 4, 60_000, 'both parts under way');
    const cancelling = await client.batches.cancel(created.id);
    expect(['cancelling', 'cancelled']).toContain(cancelling.status);

    const batch = await ended(client, created.id);
    expect(batch.status).toBe('cancelled');
    // The cancel reached the provider.
    await waitUntil(async () => upstream()?.status === 'cancelled', 30_000, 'the provider batch cancelled');
    const output = await readResults(client, batch.output_file_id);
    const errors = await readResults(client, batch.error_file_id);
    expect([...output, ...errors].map((entry) => indexOf(entry.custom_id)).sort((a, b) => a - b)).toEqual(Array.from({ length: count }, (_, index) => index));
    expect(output.map((entry) => indexOf(entry.custom_id))).toEqual(output.map((entry) => indexOf(entry.custom_id)).sort((a, b) => a - b));
    expect(errors.map((entry) => indexOf(entry.custom_id))).toEqual(errors.map((entry) => indexOf(entry.custom_id)).sort((a, b) => a - b));
    for (const entry of output) expect(entry.response?.body.choices[0]?.message.content).toContain(prompt(indexOf(entry.custom_id)));
    for (const entry of errors) expect(entry.error?.code).toBe('batch_cancelled');
    // Both parts ran some lines and had some cancelled.
    const ranOf = (family: Family): number => output.filter((entry) => familyOfLine(indexOf(entry.custom_id)) === family).length;
    const gptRan = ranOf('gpt');
    expect(gptRan).toBeGreaterThanOrEqual(2);
    expect(gptRan).toBeLessThan(count / 3);
    expect(ranOf('claude') + ranOf('gemini')).toBeGreaterThanOrEqual(4);
    expect(ranOf('claude') + ranOf('gemini')).toBeLessThan((count * 2) / 3);
    expect(batch.request_counts).toEqual({ total: count, completed: output.length, failed: 0 });
    // Lines cancelled before they ran were never sent upstream.
    expect(slowAnthropic.requests.filter((request) => request.path === '/v1/messages').length).toBe(ranOf('claude'));

    // Only the lines run are charged, each at its batch price; what the batch held beyond them is released.
    const rows = await usageRows(account, created.id);
    expect(rows.map((row) => lineOfRequest(created.id, row.request_id)).sort((a, b) => a - b)).toEqual(output.map((entry) => indexOf(entry.custom_id)));
    const total = priced(created.id, rows);
    expect((await gateway.gateway.services.storage.batches.get(account.accountId, created.id))?.costNano).toBe(total);
    expect(await holdOf(account, created.id)).toBe(0n);
    expect(before - await gateway.gateway.services.ledger.availableBalance(account.accountId)).toBe(total);
    const check = await gateway.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${account.accountId}`);
    expect(check.body).toMatchObject({ ok: true, problems: [] });
  }, 180_000);
});

describe('a gateway process killed while a split batch runs', () => {
  const LINES = 30;
  let openai: MockOpenAIUpstream;
  let anthropic: MockAnthropicUpstream;
  let gemini: MockGeminiUpstream;
  let cluster: ServeCluster;

  const query = (sqlText: string, parameters: string[]) => queryClusterDatabase(cluster.databaseUrl, sqlText, parameters);

  beforeAll(async () => {
    // The provider runs its lines slowly and the queue's answers take most of a second: the kill lands mid-way.
    [openai, anthropic, gemini] = await Promise.all([
      startMockOpenAIUpstream({ batchLineDelayMs: 400 }), startMockAnthropicUpstream({ responseDelayMs: 800 }), startMockGeminiUpstream({ responseDelayMs: 800 }),
    ]);
    const price = (family: Family): string => {
      const prices = pricing(family);
      return `{ input_per_mtok: ${prices.input_per_mtok}, output_per_mtok: ${prices.output_per_mtok}, batch_input_per_mtok: ${prices.batch_input_per_mtok}, batch_output_per_mtok: ${prices.batch_output_per_mtok} }`;
    };
    cluster = await startServeCluster(0, [
      'models:',
      `  - { id: kill-gpt, pricing: ${price('gpt')} }`,
      `  - { id: kill-claude, pricing: ${price('claude')} }`,
      `  - { id: kill-gemini, pricing: ${price('gemini')} }`,
      'channels:',
      `  - { name: kill-openai, type: openai, base_url: "${openai.url}", api_key: sk-upstream-test, models: { kill-gpt: gpt-4o-mini } }`,
      // Pass-through stays on here: the batch's one provider part is OpenAI's, so the Claude lines run on the queue.
      `  - { name: kill-anthropic, type: anthropic, base_url: "${anthropic.url}", api_key: sk-ant-upstream-test, models: { kill-claude: claude-sonnet-4-5 } }`,
      `  - { name: kill-gemini, type: gemini, base_url: "${gemini.url}", api_key: gemini-upstream-test, models: { kill-gemini: gemini-2.5-flash } }`,
    ], {
      BATCH_CONCURRENCY: '3',
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

  it('has both parts finished by another process, every line answered once and charged once', async () => {
    const victim = await cluster.start('victim', { INSTANCE_ID: 'mixed-victim' });
    const account = await cluster.admin<{ id: string }>('POST', '/admin/accounts', { email: 'mixed-kill@example.com' });
    const accountId = account.body.id;
    await cluster.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 5 });
    const key = (await cluster.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, {})).body.key;
    const [{ balance_nano: balanceBefore }] = await query('select balance_nano from accounts where id = $1', [accountId]) as [{ balance_nano: unknown }];

    const client = new OpenAI({ apiKey: key, baseURL: `${victim.url}/v1`, maxRetries: 0 });
    const file = await client.files.create({ file: await toFile(Buffer.from(batchFile({ gpt: 'kill-gpt', claude: 'kill-claude', gemini: 'kill-gemini' }, LINES)), 'kill.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });

    // Killed once the provider runs its part and the queue has answered some of its lines while others wait.
    const queueStates = async (): Promise<Map<string, number>> => {
      const rows = await query('select state, count(*) as count from batch_lines where batch_id = $1 and via_provider = 0 group by state', [created.id]);
      return new Map(rows.map((row) => [row.state as string, Number(row.count)]));
    };
    await waitUntil(async () => {
      const [provider] = await query('select state, upstream_batch_id from provider_batches where batch_id = $1', [created.id]);
      const states = await queueStates();
      return provider?.state === 'running' && provider.upstream_batch_id !== null && (states.get('done') ?? 0) >= 3 && (states.get('running') ?? 0) > 0;
    }, 60_000, 'the provider part submitted and queue lines done while others run');
    victim.process.kill();
    await victim.process.exited;
    const marked = await query('select line from batch_lines where batch_id = $1 and via_provider = 1 order by line', [created.id]);
    expect(marked.map((row) => Number(row.line) - 1)).toEqual(Array.from({ length: LINES }, (_, index) => index).filter((index) => familyOfLine(index) === 'gpt'));
    const runningAtKill = (await query('select custom_id from batch_lines where batch_id = $1 and state = $2 and via_provider = 0', [created.id, 'running'])).map((row) => row.custom_id as string);
    expect(runningAtKill.length).toBeGreaterThan(0);

    cluster.instances.splice(cluster.instances.indexOf(victim), 1);
    const survivor = await cluster.start('survivor', { INSTANCE_ID: 'mixed-survivor' });
    const survivorClient = new OpenAI({ apiKey: key, baseURL: `${survivor.url}/v1`, maxRetries: 0 });
    const batch = await ended(survivorClient, created.id, 120_000);
    expect(batch.status).toBe('completed');
    expect(batch.request_counts?.total).toBe(LINES);

    // The provider batch was submitted once and taken up; the Anthropic channel made no batch of its own.
    expect([...openai.batches.batches.values()].filter((entry) => entry.metadata?.unigate_batch === created.id)).toHaveLength(1);
    expect(anthropic.batches.batches.size).toBe(0);
    expect(gemini.batches.batches.size).toBe(0);

    // Every line has its result once; a line can fail only where the kill fell between its charge and its record.
    const output = await readResults(survivorClient, batch.output_file_id);
    const errors = await readResults(survivorClient, batch.error_file_id);
    expect([...output, ...errors].map((entry) => indexOf(entry.custom_id)).sort((a, b) => a - b)).toEqual(Array.from({ length: LINES }, (_, index) => index));
    for (const entry of output) expect(entry.response?.body.choices[0]?.message.content).toContain(prompt(indexOf(entry.custom_id)));
    for (const entry of errors) {
      expect(runningAtKill).toContain(entry.custom_id);
      expect(JSON.stringify(entry.response?.body)).toContain('ran and was charged');
    }
    // A queue line was asked upstream once; only one cut by the kill may have been asked twice.
    const asked = new Map<string, number>();
    const texts = [
      ...anthropic.requests.filter((request) => request.path === '/v1/messages').map((request) => JSON.stringify(request.body)),
      ...gemini.requests.filter((request) => request.path.endsWith(':generateContent')).map((request) => JSON.stringify(request.body)),
    ];
    for (let index = 0; index < LINES; index += 1) {
      if (familyOfLine(index) === 'gpt') continue;
      asked.set(`mix-${index}`, texts.filter((text) => text.includes(`"${prompt(index)}"`)).length);
    }
    for (const [customId, times] of asked) {
      if (runningAtKill.includes(customId)) expect([1, 2], customId).toContain(times);
      else expect(times, customId).toBe(1);
    }

    // One usage row and one ledger charge per line, at its model's batch price; the balance moved by their sum.
    let usage: Array<Record<string, unknown>> = [];
    let charges: Array<Record<string, unknown>> = [];
    await waitUntil(async () => {
      usage = await query('select request_id, prompt_tokens, completion_tokens, cost_nano, tags from usage_logs where account_id = $1', [accountId]);
      charges = await query('select request_id, amount_nano from ledger_entries where account_id = $1 and kind = $2', [accountId, 'usage']);
      return usage.length >= LINES && charges.length >= LINES;
    }, 15_000, 'usage rows and charges written');
    const lineIds = Array.from({ length: LINES }, (_, index) => `req_${created.id}_${index + 1}`).sort();
    expect(usage.map((row) => row.request_id).sort()).toEqual(lineIds);
    expect(charges.map((row) => row.request_id).sort()).toEqual(lineIds);
    let total = 0n;
    for (const row of usage) {
      const price = NANO_PER_TOKEN[familyOfLine(lineOfRequest(created.id, row.request_id as string))];
      const expected = big(row.prompt_tokens) * price.input + big(row.completion_tokens) * price.output;
      expect(big(row.prompt_tokens)).toBeGreaterThan(0n);
      expect(big(row.cost_nano), row.request_id as string).toBe(expected);
      expect(JSON.parse(row.tags as string)).toMatchObject({ batch: created.id });
      expect(big((charges.find((entry) => entry.request_id === row.request_id) as Record<string, unknown>).amount_nano)).toBe(-expected);
      total += expected;
    }
    const [{ cost_nano: batchCost }] = await query('select cost_nano from batches where id = $1', [created.id]) as [{ cost_nano: unknown }];
    expect(big(batchCost)).toBe(total);
    await waitUntil(async () => (await query('select instance_id from money_holds where instance_id = $1', [`batch:${created.id}`])).length === 0, 15_000, 'the batch\'s hold released');
    const [{ balance_nano: balanceAfter }] = await query('select balance_nano from accounts where id = $1', [accountId]) as [{ balance_nano: unknown }];
    expect(big(balanceBefore) - big(balanceAfter)).toBe(total);
    const check = await cluster.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${accountId}`);
    expect(check.body).toMatchObject({ ok: true, problems: [] });
  }, 200_000);
});
