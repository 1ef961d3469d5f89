/**
 * A batch's worst case is held in the ledger for the batch's whole life: a batch the balance cannot cover is refused
 * at creation; while it runs, interactive requests cannot spend what it holds; each line is charged against the hold;
 * cancelling releases exactly what the lines did not use; the wallet moves by exactly the lines' charges; and a hold
 * whose release was lost (the instance stopped) is released by the next instance, once.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchHolder, walletPool } from '../../../src/billing/money-pools.js';
import { usdToNano } from '../../../src/billing/money.js';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

const MODEL = 'hold-gpt';
/** USD per million tokens: normal, and the batch prices (half). */
const PRICING = { input_per_mtok: 2, output_per_mtok: 8, batch_input_per_mtok: 1, batch_output_per_mtok: 4 };
/** Both instances read the channels' sealed credentials with one key. */
const SECRET_KEY = 'batch-hold-test-secret-key-0123456789ab';

let gateway: TestGateway;
let upstream: MockOpenAIUpstream;
/** What each release of a holder gave back, in order. */
const releases: Array<{ holder: string; released: bigint }> = [];

function jsonl(count: number, maxTokens: number): string {
  let text = '';
  for (let index = 0; index < count; index += 1) {
    const body = { model: MODEL, messages: [{ role: 'user', content: `Line ${index}: a word, please.` }], max_tokens: maxTokens };
    text += `${JSON.stringify({ custom_id: `line-${index}`, method: 'POST', url: '/v1/chat/completions', body })}\n`;
  }
  return text;
}

async function createBatch(client: OpenAI, text: string): Promise<OpenAI.Batches.Batch> {
  const file = await client.files.create({ file: await toFile(Buffer.from(text), 'hold.jsonl'), purpose: 'batch' });
  return client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
}

async function waitFor(client: OpenAI, id: string, done: (batch: OpenAI.Batches.Batch) => boolean): Promise<OpenAI.Batches.Batch> {
  for (let attempt = 0; attempt < 800; attempt += 1) {
    const batch = await client.batches.retrieve(id);
    if (done(batch)) return batch;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`batch ${id} did not get there`);
}

/** The batch's hold as storage has it, by pool. */
async function heldBy(target: TestGateway, accountId: string, batchId: string): Promise<Map<string, bigint>> {
  const holds = await target.gateway.services.storage.money.listHolds(accountId);
  return new Map(holds.filter((hold) => hold.instanceId === batchHolder(batchId)).map((hold) => [hold.pool, hold.heldNano]));
}

/** What the batch's lines were charged, from their usage rows. */
async function lineCharges(target: TestGateway, keyId: string, batchId: string): Promise<{ lines: number; totalNano: bigint }> {
  await flushWrites(target);
  const usage = await target.admin<{ data: Array<{ request_id: string; cost_usd: number }> }>('GET', `/admin/usage?key_id=${keyId}&limit=200`);
  const rows = usage.body.data.filter((row) => row.request_id.startsWith(`req_${batchId}_`));
  return { lines: rows.length, totalNano: rows.reduce((sum, row) => sum + BigInt(Math.round(row.cost_usd * 1e9)), 0n) };
}

async function balanceOf(target: TestGateway, accountId: string): Promise<bigint> {
  await flushWrites(target);
  return (await target.gateway.services.storage.accounts.getById(accountId))?.balanceNano ?? 0n;
}

/** The balance equals the sum of the account's ledger entries (nothing moved outside the ledger). */
async function expectLedgerBalances(target: TestGateway, accountId: string): Promise<void> {
  const audit = await target.gateway.services.storage.money.audit(accountId);
  const row = audit.accounts.find((entry) => entry.id === accountId);
  expect(row?.balanceNano).toBe(row?.ledgerSumNano);
  expect(audit.duplicateCharges).toEqual([]);
}

beforeAll(async () => {
  upstream = await startMockOpenAIUpstream({ responseDelayMs: 150 });
  // The gateway's own queue is under test: these one-model batches are not sent to the provider's Batch API.
  gateway = await startTestGateway({ env: { BATCH_POLL_MS: '20', BATCH_CONCURRENCY: '2', SECRET_KEY, BATCH_PROVIDER_PASS_THROUGH: 'off' } });
  await addRoutedModel(gateway, { model: MODEL, pricing: PRICING, channel: { name: 'hold-up', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' } } });
  const ledger = gateway.gateway.services.ledger;
  const release = ledger.releaseHolder.bind(ledger);
  ledger.releaseHolder = async (holder, accountId) => {
    const released = await release(holder, accountId);
    releases.push({ holder, released });
    return released;
  };
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('batch hold', () => {
  it('refuses a batch whose worst case exceeds the balance at creation, holding nothing, and holds the worst case of one it accepts', async () => {
    const poor = await seedAccount(gateway, { balanceUsd: 0.01 });
    const client = new OpenAI({ apiKey: poor.key, baseURL: gateway.baseURL, maxRetries: 0 });
    // Ten lines of up to 1000 output tokens at $4/Mtok: over $0.04 at worst, against $0.01.
    await expect(createBatch(client, jsonl(10, 1000))).rejects.toMatchObject({ status: 402 });
    expect((await client.batches.list()).data).toEqual([]);
    expect(await gateway.gateway.services.storage.money.listHolds(poor.accountId)).toSatisfy((holds: Array<{ instanceId: string }>) => holds.every((hold) => !hold.instanceId.startsWith('batch:')));

    // One such line fits: its worst case is held under the batch until the batch ends, then released whole but for
    // what the line was charged.
    const accepted = await createBatch(client, jsonl(1, 1000));
    const held = (await heldBy(gateway, poor.accountId, accepted.id)).get(walletPool(poor.accountId)) ?? 0n;
    // The prompt at a token a byte (batch input price) plus 1000 output tokens at the batch output price.
    expect(held).toBeGreaterThanOrEqual(1000n * 4_000n);
    expect(held).toBeLessThan(usdToNano(0.01));
    const done = await waitFor(client, accepted.id, (batch) => batch.status === 'completed');
    expect(done.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
    const charged = await lineCharges(gateway, poor.keyId, accepted.id);
    expect(charged.lines).toBe(1);
    expect((await heldBy(gateway, poor.accountId, accepted.id)).size).toBe(0);
    expect(releases.filter((release) => release.holder === batchHolder(accepted.id)).map((release) => release.released)).toEqual([held - charged.totalNano]);
    expect(await balanceOf(gateway, poor.accountId)).toBe(usdToNano(0.01) - charged.totalNano);
    await expectLedgerBalances(gateway, poor.accountId);
  });

  it('keeps what a running batch holds from interactive requests, charges each line against it, and releases exactly the rest on cancel', async () => {
    const owner = await seedAccount(gateway, { balanceUsd: 0.05 });
    const client = new OpenAI({ apiKey: owner.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const interactive = { model: MODEL, max_tokens: 3000, messages: [{ role: 'user' as const, content: 'Hello' }] };
    const created = await createBatch(client, jsonl(12, 1000));
    const hold = await heldBy(gateway, owner.accountId, created.id);
    const held = hold.get(walletPool(owner.accountId)) ?? 0n;
    // Twelve lines of up to 1000 output tokens at $4/Mtok: about $0.049 of the $0.05.
    expect(held).toBeGreaterThan(usdToNano(0.048));
    expect(held).toBeLessThan(usdToNano(0.05));

    // An interactive request whose worst case ($0.024 at the normal price) fits the balance but not what the batch
    // leaves free is refused while the batch runs.
    await expect(client.chat.completions.create(interactive)).rejects.toMatchObject({ status: 402 });

    // Lines charged so far come off the hold, pool by pool, and the hold never grows back.
    const running = await waitFor(client, created.id, (batch) => (batch.request_counts?.completed ?? 0) >= 3);
    expect(running.status).toBe('in_progress');
    await flushWrites(gateway);
    const midway = (await heldBy(gateway, owner.accountId, created.id)).get(walletPool(owner.accountId)) ?? 0n;
    expect(midway).toBeLessThan(held);

    await client.batches.cancel(created.id);
    const cancelled = await waitFor(client, created.id, (batch) => batch.status === 'cancelled');
    const ran = (cancelled.request_counts?.completed ?? 0) + (cancelled.request_counts?.failed ?? 0);
    expect(ran).toBeGreaterThanOrEqual(3);
    expect(ran).toBeLessThan(12);
    const charged = await lineCharges(gateway, owner.keyId, created.id);
    expect(charged.lines).toBe(ran);
    expect(charged.totalNano).toBeGreaterThan(0n);

    // The hold is gone; the one release gave back exactly what the lines did not use, to the nano-dollar.
    expect((await heldBy(gateway, owner.accountId, created.id)).size).toBe(0);
    expect(releases.filter((release) => release.holder === batchHolder(created.id)).map((release) => release.released)).toEqual([held - charged.totalNano]);
    expect(await balanceOf(gateway, owner.accountId)).toBe(usdToNano(0.05) - charged.totalNano);
    await expectLedgerBalances(gateway, owner.accountId);

    // With the hold released the same interactive request goes through.
    const answer = await client.chat.completions.create(interactive);
    expect(answer.object).toBe('chat.completion');
  });

  it('has the next instance release, once, the hold of a batch whose release was lost when its instance stopped', async () => {
    const owner = await seedAccount(gateway, { balanceUsd: 1 });
    const client = new OpenAI({ apiKey: owner.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const ledger = gateway.gateway.services.ledger;
    const release = ledger.releaseHolder;
    let lost = 0;
    // The instance stops between the batch's end and its release: the release never happens here.
    ledger.releaseHolder = async (holder, accountId) => {
      if (holder.startsWith('batch:')) {
        lost += 1;
        throw new Error('instance stopped');
      }
      return release(holder, accountId);
    };
    let second: TestGateway | null = null;
    try {
      const created = await createBatch(client, jsonl(3, 200));
      const held = (await heldBy(gateway, owner.accountId, created.id)).get(walletPool(owner.accountId)) ?? 0n;
      await waitFor(client, created.id, (batch) => batch.status === 'completed');
      for (let attempt = 0; attempt < 100 && lost === 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(lost).toBeGreaterThan(0);
      const charged = await lineCharges(gateway, owner.keyId, created.id);
      expect(charged.lines).toBe(3);
      // The rest of the hold is still there: interactive requests still cannot use it.
      const left = (await heldBy(gateway, owner.accountId, created.id)).get(walletPool(owner.accountId)) ?? 0n;
      expect(left).toBe(held - charged.totalNano);

      // A restarted instance on the same database sweeps it at once.
      second = await startTestGateway({ env: { DATABASE_URL: gateway.databaseUrl, SECRET_KEY, BATCH_POLL_MS: '20', BATCH_PROVIDER_PASS_THROUGH: 'off' } });
      for (let attempt = 0; attempt < 200 && (await heldBy(second, owner.accountId, created.id)).size > 0; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 25));
      expect((await heldBy(second, owner.accountId, created.id)).size).toBe(0);
      // Releasing it again gives nothing back; the wallet moved by the lines' charges alone.
      expect(await second.gateway.services.ledger.releaseHolder(batchHolder(created.id), owner.accountId)).toBe(0n);
      expect(await balanceOf(second, owner.accountId)).toBe(usdToNano(1) - charged.totalNano);
      await expectLedgerBalances(second, owner.accountId);
    } finally {
      ledger.releaseHolder = release;
      await second?.close();
    }
  }, 60_000);
});
