/**
 * A stream its caller abandons after the first events is billed for what the upstream bills, on every client family
 * and upstream kind (same family: pass-through; otherwise translated): the input as the upstream reported it (or
 * counted locally when it reports input only at the end) plus the larger of the output reported and the output
 * delivered, even when no text had reached the caller yet. A request the upstream refused is free.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { callChat, channelFor, FAMILIES, startUpstream, usageRow, type AnyUpstream, type Family } from '../resilience/resilience-support.js';

const PROMPT = 'Please tell me about the grey heron of the river bank in a few words';
// One token is 0.001 USD: every token shows in the charge.
const PRICING = { input_per_mtok: 1000, output_per_mtok: 1000 };
const TOKEN_USD = 0.001;

let gateway: TestGateway;
let account: SeededAccount;
const upstreams: AnyUpstream[] = [];

function streamRequest(client: Family, model: string, signal: AbortSignal): Promise<Response> {
  const init = (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(gateway.url + path, { method: 'POST', signal, headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (client === 'openai') return init('/v1/chat/completions', { model, stream: true, messages: [{ role: 'user', content: PROMPT }] });
  if (client === 'anthropic') return init('/v1/messages', { model, stream: true, max_tokens: 256, messages: [{ role: 'user', content: PROMPT }] }, { 'anthropic-version': '2023-06-01' });
  return init(`/v1beta/models/${model}:streamGenerateContent?alt=sse`, { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] });
}

beforeAll(async () => {
  gateway = await startTestGateway();
  for (const kind of FAMILIES) {
    const slow = await startUpstream(kind, { chunkDelayMs: 200 });
    const whole = await startUpstream(kind);
    upstreams.push(slow, whole);
    await addRoutedModel(gateway, { model: `abandon-${kind}`, pricing: PRICING, channel: channelFor(slow, `abandon-${kind}`, `abandon-${kind}`) });
    await addRoutedModel(gateway, { model: `whole-abandon-${kind}`, pricing: PRICING, channel: channelFor(whole, `whole-abandon-${kind}`, `whole-abandon-${kind}`) });
  }
  account = await seedAccount(gateway, { balanceUsd: 50 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all(upstreams.map((upstream) => upstream.close()));
});

describe.each(FAMILIES)('%s caller', (client) => {
  it.each(FAMILIES)('→ %s upstream: abandoned after three events, billed the input plus the larger output', async (kind) => {
    const whole = await callChat(gateway, account.key, client, `whole-abandon-${kind}`, PROMPT, true);
    const wholeRow = (await usageRow(gateway, account.keyId, whole.requestId))!;
    expect(wholeRow.status).toBe(200);

    const controller = new AbortController();
    const response = await streamRequest(client, `abandon-${kind}`, controller.signal);
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id') ?? '';
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let received = '';
    while (received.split('\n\n').length - 1 < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      received += decoder.decode(value, { stream: true }).replaceAll('\r\n', '\n');
    }
    controller.abort();
    await reader.cancel().catch(() => undefined);

    await expect.poll(async () => (await usageRow(gateway, account.keyId, requestId))?.status, { timeout: 10_000 }).toBe(499);
    const row = (await usageRow(gateway, account.keyId, requestId))!;
    expect(row.error_code).toBe('client_closed_request');
    // The upstream accepted the request: its input is billed whether or not text reached the caller.
    expect(row.prompt_tokens).toBeGreaterThan(0);
    // Anthropic and Gemini report the input in their first events: billed as reported, the same as the whole answer's.
    if (kind !== 'openai') expect(row.prompt_tokens).toBe(wholeRow.prompt_tokens);
    expect(row.completion_tokens).toBeLessThan(wholeRow.completion_tokens);
    // The charge is exactly the price of those tokens (the row's cost is the ledger's charge).
    expect(row.cost_usd).toBeCloseTo((row.prompt_tokens + row.completion_tokens) * TOKEN_USD, 9);
  });
});

describe('a request the upstream refused before accepting it', () => {
  it.each(FAMILIES)('is free (%s upstream, anthropic caller)', async (kind) => {
    const refusing = await startUpstream(kind);
    upstreams.push(refusing);
    await addRoutedModel(gateway, { model: `refused-${kind}`, pricing: PRICING, channel: channelFor(refusing, `refused-${kind}`, `refused-${kind}`) });
    refusing.fault({ kind: 'status', status: 400, times: 1 });
    const controller = new AbortController();
    const response = await streamRequest('anthropic', `refused-${kind}`, controller.signal);
    expect(response.status).toBe(400);
    const requestId = response.headers.get('x-request-id') ?? '';
    await response.text();
    await expect.poll(async () => (await usageRow(gateway, account.keyId, requestId))?.status, { timeout: 10_000 }).toBe(400);
    const row = (await usageRow(gateway, account.keyId, requestId))!;
    expect(row.cost_usd).toBe(0);
    expect(row.prompt_tokens).toBe(0);
  });
});
