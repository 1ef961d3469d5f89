/**
 * A caller that disconnects mid-stream aborts the upstream request at once, for every client family and upstream
 * kind: the upstream sees its connection closed (through a TCP tap in front of each mock), the usage row says 499
 * and bills less than a whole answer, and once the run is over no socket, server or timer is left open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { callChat, channelFor, FAMILIES, handlesLeftOver, openHandles, startTap, startUpstream, usageRow, type AnyUpstream, type ConnectionTap, type Family } from './resilience-support.js';

const PROMPT = 'Please tell me about the grey heron of the river bank in a few words';
/** Pause between the mocks' stream chunks: the answers below run for several seconds when nobody leaves. */
const DRIP_MS = 400;
/** How soon the upstream connection must close once the caller leaves: well before the next few chunks are due. */
const CLOSE_WITHIN_MS = 1000;

let baseline: Record<string, number>;
let gateway: TestGateway;
let account: SeededAccount;
const upstreams = new Map<Family, { mock: AnyUpstream; tap: ConnectionTap; model: string }>();
const references: AnyUpstream[] = [];

function streamRequest(client: Family, model: string, signal: AbortSignal): Promise<Response> {
  const init = (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> =>
    fetch(gateway.url + path, { method: 'POST', signal, headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  if (client === 'openai') return init('/v1/chat/completions', { model, stream: true, messages: [{ role: 'user', content: PROMPT }] });
  if (client === 'anthropic') return init('/v1/messages', { model, stream: true, max_tokens: 256, messages: [{ role: 'user', content: PROMPT }] }, { 'anthropic-version': '2023-06-01' });
  return init(`/v1beta/models/${model}:streamGenerateContent?alt=sse`, { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] });
}

beforeAll(async () => {
  baseline = openHandles();
  gateway = await startTestGateway();
  for (const kind of FAMILIES) {
    const mock = await startUpstream(kind, { chunkDelayMs: DRIP_MS });
    const tap = await startTap(mock.port);
    const model = `cancel-${kind}`;
    await addRoutedModel(gateway, { model, channel: channelFor({ kind, url: tap.url(kind === 'openai' ? '/v1' : '') }, `cancel-${kind}`, model) });
    upstreams.set(kind, { mock, tap, model });
    // The same answers without the drip, for the cost of a whole answer.
    const reference = await startUpstream(kind);
    references.push(reference);
    await addRoutedModel(gateway, { model: `whole-${kind}`, channel: channelFor(reference, `whole-${kind}`, `whole-${kind}`) });
  }
  account = await seedAccount(gateway, { balanceUsd: 20 });
});

async function closeAll(): Promise<void> {
  await gateway?.close();
  for (const { mock, tap } of upstreams.values()) {
    await tap.close();
    await mock.close();
  }
  await Promise.all(references.map((reference) => reference.close()));
}

afterAll(closeAll);

describe.each(FAMILIES)('%s caller', (client) => {
  it.each(FAMILIES)('→ %s upstream: leaving mid-stream closes the upstream connection and bills what was delivered', async (kind) => {
    const { mock, tap, model } = upstreams.get(kind)!;
    const whole = await callChat(gateway, account.key, client, `whole-${kind}`, PROMPT, true);
    const wholeRow = (await usageRow(gateway, account.keyId, whole.requestId))!;
    expect(wholeRow.status).toBe(200);
    // Enough chunks that the dripped answer would still be running long after CLOSE_WITHIN_MS.
    expect(wholeRow.completion_tokens).toBeGreaterThan(8);

    const controller = new AbortController();
    const response = await streamRequest(client, model, controller.signal);
    expect(response.status).toBe(200);
    const requestId = response.headers.get('x-request-id') ?? '';
    const reader = response.body!.getReader();
    expect((await reader.read()).done).toBe(false);
    const requestsBefore = mock.requests.length;
    const streaming = tap.connections.filter((connection) => connection.closedAt === null);
    expect(streaming.length).toBeGreaterThan(0);
    const abortedAt = Date.now();
    controller.abort();
    await reader.cancel().catch(() => undefined);

    // The upstream side of the stream closes within moments, not at the end of the answer; nothing is retried.
    await expect.poll(() => streaming.every((connection) => connection.closedAt !== null), { timeout: CLOSE_WITHIN_MS * 2, interval: 5 }).toBe(true);
    for (const connection of streaming) expect(connection.closedAt! - abortedAt).toBeLessThan(CLOSE_WITHIN_MS);
    await expect.poll(() => tap.open(), { timeout: 5000, interval: 5 }).toBe(0);
    expect(mock.requests.length).toBe(requestsBefore);

    await expect.poll(async () => (await usageRow(gateway, account.keyId, requestId))?.status, { timeout: 10_000 }).toBe(499);
    const row = (await usageRow(gateway, account.keyId, requestId))!;
    expect(row.error_code).toBe('client_closed_request');
    expect(row.completion_tokens).toBeLessThan(wholeRow.completion_tokens);
    expect(row.cost_usd).toBeLessThan(wholeRow.cost_usd);
  });
});

describe('after the run', () => {
  it('leaves no socket, server or timer open', async () => {
    await closeAll();
    const extra = await handlesLeftOver(baseline);
    expect(extra).toEqual({});
  });
});
