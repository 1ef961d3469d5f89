/**
 * A real `unigate serve` process killed with SIGKILL while it runs a batch (lines leased, some answered and charged,
 * some waiting on a slow upstream), then a second process on the same database: the batch completes, every line is
 * run to an answer and charged exactly once (one usage row and one ledger charge per line, each at the batch price),
 * the account's balance moved by exactly the sum of those charges, and the dead process's holds are released.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { killAll, waitUntil } from '../cli/cli-process.js';
import { queryClusterDatabase, startServeCluster, type ServeCluster } from '../serve-cluster.js';

const LINES = 18;
/** Batch prices (USD per million tokens): a line costs input × 1000 + output × 4000 nano-dollars. */
const INPUT_NANO_PER_TOKEN = 1000n;
const OUTPUT_NANO_PER_TOKEN = 4000n;

let upstream: MockOpenAIUpstream;
let cluster: ServeCluster;

const query = (sqlText: string, parameters: string[]) => queryClusterDatabase(cluster.databaseUrl, sqlText, parameters);

const big = (value: unknown): bigint => BigInt(value as bigint | number | string);

beforeAll(async () => {
  // Every answer takes a second: the kill lands while lines are waiting on the upstream.
  upstream = await startMockOpenAIUpstream({ responseDelayMs: 1000 });
  cluster = await startServeCluster(0, [
    'models:',
    '  - { id: kill-gpt, pricing: { input_per_mtok: 2, output_per_mtok: 8, batch_input_per_mtok: 1, batch_output_per_mtok: 4 } }',
    'channels:',
    `  - { name: kill-openai, type: openai, base_url: "${upstream.url}", api_key: sk-upstream-test, models: { kill-gpt: gpt-4o-mini } }`,
  ], {
    // The gateway's own queue is under test: this one-model batch is not sent to the provider's Batch API.
    BATCH_PROVIDER_PASS_THROUGH: 'off',
    BATCH_CONCURRENCY: '3',
    BATCH_POLL_MS: '50',
    BATCH_LINE_LEASE_SECONDS: '1',
    INSTANCE_STALE_SECONDS: '2',
  });
}, 90_000);

afterAll(async () => {
  killAll();
  await cluster?.close();
  await upstream?.close();
});

describe('a gateway process killed mid-batch', () => {
  it('has its batch finished by another process, every line run and charged exactly once', async () => {
    const victim = await cluster.start('victim', { INSTANCE_ID: 'batch-victim' });
    const account = await cluster.admin<{ id: string }>('POST', '/admin/accounts', { email: 'batch-kill@example.com' });
    const accountId = account.body.id;
    await cluster.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 5 });
    const key = (await cluster.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, {})).body.key;
    const [{ balance_nano: balanceBefore }] = await query('select balance_nano from accounts where id = $1', [accountId]) as [{ balance_nano: unknown }];

    const client = new OpenAI({ apiKey: key, baseURL: `${victim.url}/v1`, maxRetries: 0 });
    let text = '';
    for (let index = 0; index < LINES; index += 1) {
      const body = { model: 'kill-gpt', messages: [{ role: 'user', content: `Kill test question number ${index}` }], max_tokens: 16 };
      text += `${JSON.stringify({ custom_id: `line-${index}`, method: 'POST', url: '/v1/chat/completions', body })}\n`;
    }
    const file = await client.files.create({ file: await toFile(Buffer.from(text), 'kill.jsonl'), purpose: 'batch' });
    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });

    // Killed once some lines are answered and charged and others are in the middle of their upstream call.
    const lineStates = async (): Promise<Map<string, number>> => {
      const rows = await query('select state, count(*) as count from batch_lines where batch_id = $1 group by state', [created.id]);
      return new Map(rows.map((row) => [row.state as string, Number(row.count)]));
    };
    await waitUntil(async () => {
      const states = await lineStates();
      return (states.get('done') ?? 0) >= 3 && (states.get('running') ?? 0) > 0;
    }, 30_000, 'some lines done while others run');
    victim.process.kill();
    await victim.process.exited;
    const atKill = await lineStates();
    expect(atKill.get('running') ?? 0).toBeGreaterThan(0);
    expect(atKill.get('pending') ?? 0).toBeGreaterThan(0);
    const runningAtKill = (await query('select custom_id from batch_lines where batch_id = $1 and state = $2', [created.id, 'running'])).map((row) => row.custom_id as string);

    // A second process, another instance id, on the same database.
    cluster.instances.splice(cluster.instances.indexOf(victim), 1);
    const survivor = await cluster.start('survivor', { INSTANCE_ID: 'batch-survivor' });
    const survivorClient = new OpenAI({ apiKey: key, baseURL: `${survivor.url}/v1`, maxRetries: 0 });
    let batch = await survivorClient.batches.retrieve(created.id);
    const deadline = Date.now() + 60_000;
    while (!['completed', 'failed', 'expired', 'cancelled'].includes(batch.status) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      batch = await survivorClient.batches.retrieve(created.id);
    }
    expect(batch.status).toBe('completed');
    expect(batch.request_counts?.total).toBe(LINES);

    // Every line has its result, once, its custom_id kept. A line can only fail one way: the kill fell between its
    // charge and the record of its answer (it was charged once and is not run again); nothing else fails.
    type ResultLine = { custom_id: string; response: { status_code: number; body: unknown } | null };
    const read = async (id: string | null | undefined): Promise<ResultLine[]> => (id === null || id === undefined ? []
      : (await (await survivorClient.files.content(id)).text()).trim().split('\n').map((line) => JSON.parse(line) as ResultLine));
    const output = await read(batch.output_file_id);
    const errors = await read(batch.error_file_id);
    expect([...output, ...errors].map((line) => line.custom_id).sort()).toEqual(Array.from({ length: LINES }, (_, index) => `line-${index}`).sort());
    for (const line of output) expect(line.response?.status_code).toBe(200);
    for (const line of errors) {
      expect(runningAtKill).toContain(line.custom_id);
      expect(JSON.stringify(line.response?.body)).toContain('ran and was charged');
    }
    expect(output.length).toBeGreaterThanOrEqual(LINES - runningAtKill.length);

    // The upstream was asked each line once; only a line cut by the kill may have been asked again.
    const asked = new Map<string, number>();
    for (const request of upstream.requests.filter((entry) => entry.path === '/v1/chat/completions')) {
      const content = ((request.body as { messages: Array<{ content: string }> }).messages[0] as { content: string }).content;
      asked.set(content, (asked.get(content) ?? 0) + 1);
    }
    for (let index = 0; index < LINES; index += 1) {
      const times = asked.get(`Kill test question number ${index}`) ?? 0;
      if (runningAtKill.includes(`line-${index}`)) expect([1, 2], `line-${index}`).toContain(times);
      else expect(times, `line-${index}`).toBe(1);
    }

    // One usage row and one ledger charge per line, under the line's fixed request id, at the batch price.
    let usage: Array<Record<string, unknown>> = [];
    let charges: Array<Record<string, unknown>> = [];
    await waitUntil(async () => {
      usage = await query('select request_id, prompt_tokens, completion_tokens, cost_nano, tags from usage_logs where account_id = $1', [accountId]);
      charges = await query('select request_id, amount_nano from ledger_entries where account_id = $1 and kind = $2', [accountId, 'usage']);
      return usage.length >= LINES && charges.length >= LINES;
    }, 10_000, 'usage rows and charges written');
    const lineIds = Array.from({ length: LINES }, (_, index) => `req_${created.id}_${index + 1}`).sort();
    expect(usage.map((row) => row.request_id).sort()).toEqual(lineIds);
    expect(charges.map((row) => row.request_id).sort()).toEqual(lineIds);
    let total = 0n;
    for (const row of usage) {
      const expected = big(row.prompt_tokens) * INPUT_NANO_PER_TOKEN + big(row.completion_tokens) * OUTPUT_NANO_PER_TOKEN;
      expect(big(row.prompt_tokens)).toBeGreaterThan(0n);
      expect(big(row.cost_nano)).toBe(expected);
      expect(JSON.parse(row.tags as string)).toMatchObject({ batch: created.id });
      const charge = charges.find((entry) => entry.request_id === row.request_id) as Record<string, unknown>;
      expect(big(charge.amount_nano)).toBe(-expected);
      total += expected;
    }
    const [{ cost_nano: batchCost }] = await query('select cost_nano from batches where id = $1', [created.id]) as [{ cost_nano: unknown }];
    expect(big(batchCost)).toBe(total);

    // The dead process's holds are released by the survivor; the balance moved by exactly the charges.
    await waitUntil(async () => big((await query('select coalesce(sum(held_nano), 0) as held from money_holds where instance_id = $1', ['batch-victim']))[0]?.held ?? 0) === 0n, 15_000, 'the victim\'s holds released');
    const [{ balance_nano: balanceAfter }] = await query('select balance_nano from accounts where id = $1', [accountId]) as [{ balance_nano: unknown }];
    expect(big(balanceBefore) - big(balanceAfter)).toBe(total);
    const check = await cluster.admin<{ ok: boolean; problems: unknown[] }>('GET', `/admin/ledger/check?account_id=${accountId}`);
    expect(check.body).toMatchObject({ ok: true, problems: [] });
  }, 150_000);
});
