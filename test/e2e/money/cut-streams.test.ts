/**
 * Streams cut by the caller at random points are billed for what was delivered: the charge is the price of the
 * delivered text (counted with the local tokenizer, at least what the caller read), exactly one charge per stream,
 * the reservation released, and the books balance.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countTextTokensLocally } from '../../../src/tokenize/count-tokens-locally.js';
import { flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel, admin } from '../admin/helpers.js';

const MODEL = 'cut-model';
let gateway: TestGateway;
let account: SeededAccount;

interface UsageRowJson {
  request_id: string;
  status: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
}

beforeAll(async () => {
  gateway = await startTestGateway();
  // 1000 USD per million tokens: one token is 0.001 USD, so every token shows in the charge.
  await addSimulatorModel(gateway, MODEL, { input_per_mtok: 1000, output_per_mtok: 1000 }, { settings: { output_tokens: 400, chunk_delay_ms: 15 } });
  account = await seedAccount(gateway, { balanceUsd: 100 });
});

afterAll(async () => {
  await gateway?.close();
});

/** Reads `chunks` SSE data events of a streamed chat answer, then hangs up; returns the text it received. */
async function readThenCut(chunks: number): Promise<{ requestId: string; text: string }> {
  const abort = new AbortController();
  const response = await fetch(`${gateway.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'a long story please' }], stream: true, max_tokens: 400 }),
    signal: abort.signal,
  });
  expect(response.status).toBe(200);
  const requestId = response.headers.get('x-request-id') ?? '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  let text = '';
  let seen = 0;
  while (seen < chunks) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    let boundary = buffered.indexOf('\n\n');
    while (boundary >= 0) {
      const event = buffered.slice(0, boundary);
      buffered = buffered.slice(boundary + 2);
      boundary = buffered.indexOf('\n\n');
      const data = event.startsWith('data: ') ? event.slice(6) : '';
      if (data === '' || data === '[DONE]') continue;
      const content = (JSON.parse(data) as { choices?: Array<{ delta?: { content?: string } }> }).choices?.[0]?.delta?.content;
      if (typeof content === 'string' && content !== '') {
        text += content;
        seen += 1;
      }
    }
  }
  abort.abort();
  await reader.cancel().catch(() => {});
  return { requestId, text };
}

describe('streams cut by the caller', () => {
  it('are billed for what was delivered, once, and release their reservation', async () => {
    await fc.assert(fc.asyncProperty(fc.integer({ min: 1, max: 25 }), async (chunks) => {
      const { requestId, text } = await readThenCut(chunks);
      let row: UsageRowJson | undefined;
      for (let attempt = 0; attempt < 40 && row === undefined; attempt += 1) {
        await flushWrites(gateway);
        row = (await admin<{ data: UsageRowJson[] }>(gateway, 'GET', `/admin/usage?key_id=${account.keyId}&limit=200`)).body.data.find((item) => item.request_id === requestId);
        if (row === undefined) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(row?.status).toBe(499);
      // The request settled before its usage row was written: one more flush writes its charge too.
      await flushWrites(gateway);
      const read = await countTextTokensLocally(text);
      // At least what the caller read; at most what could have been in flight when it hung up (two more words).
      expect(row?.completion_tokens).toBeGreaterThanOrEqual(read);
      expect(row?.completion_tokens).toBeLessThanOrEqual(read + 6);
      const ledger = await admin<{ data: Array<{ kind: string; amount_usd: number; request_id: string | null }> }>(gateway, 'GET', `/admin/accounts/${account.accountId}/ledger?limit=200`);
      const charges = ledger.body.data.filter((entry) => entry.kind === 'usage' && entry.request_id === requestId);
      expect(charges, JSON.stringify({ row, entries: ledger.body.data })).toHaveLength(1);
      const tokens = (row?.prompt_tokens ?? 0) + (row?.completion_tokens ?? 0);
      expect(Math.round(-(charges[0]?.amount_usd ?? 0) * 1e9)).toBe(tokens * 1_000_000);
      expect(Math.round((row?.cost_usd ?? 0) * 1e9)).toBe(tokens * 1_000_000);
    }), { numRuns: 8 });
    const check = await admin<{ ok: boolean; problems: unknown[] }>(gateway, 'GET', `/admin/ledger/check?account_id=${account.accountId}`);
    expect(check.body.problems).toEqual([]);
    // Nothing stays reserved for streams that ended (only an idle lease, returned within seconds).
    const pools = gateway.gateway.services.ledger.heldPools();
    for (const state of pools.values()) expect(state.inFlight).toBe(0n);
  }, 60_000);
});
