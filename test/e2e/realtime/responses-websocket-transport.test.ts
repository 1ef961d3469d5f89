/**
 * The Responses API's WebSocket mode under the realtime transport limits: a caller that closes mid-response leaves a
 * usage row of a caller who left (499) and the upstream stream is stopped; an idle connection is closed with 1000;
 * a draining instance lets the running response finish and then closes with 1001, refusing new responses meanwhile.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { addRoutedModel, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { usageRows } from './realtime-support.js';

let gateway: TestGateway | null = null;
let upstream: MockOpenAIUpstream | null = null;

afterEach(async () => {
  await gateway?.close().catch(() => undefined);
  await upstream?.close();
  gateway = null;
  upstream = null;
});

async function start(env: Record<string, string>, chunkDelayMs: number): Promise<{ gateway: TestGateway; key: string; keyId: string; url: string }> {
  upstream = await startMockOpenAIUpstream({ chunkDelayMs });
  gateway = await startTestGateway({ env });
  await addRoutedModel(gateway, { model: 'v-slow', channel: { name: 'o', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { 'v-slow': 'gpt-4o-mini' } } });
  await gateway.gateway.services.catalog.reload();
  const account = await seedAccount(gateway, { balanceUsd: 20 });
  return { gateway, key: account.key, keyId: account.keyId, url: `${gateway.baseURL.replace(/^http/, 'ws')}/responses` };
}

interface Raw {
  socket: WebSocket;
  events: Array<Record<string, unknown> & { type: string }>;
  closed: Promise<{ code: number; reason: string }>;
  until(check: () => boolean, timeoutMs?: number): Promise<void>;
}

async function open(url: string, key: string): Promise<Raw> {
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${key}` } });
  const events: Raw['events'] = [];
  socket.on('message', (data) => events.push(JSON.parse(data.toString()) as Raw['events'][number]));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  return {
    socket,
    events,
    closed,
    async until(check, timeoutMs = 10_000) {
      for (let waited = 0; !check(); waited += 20) {
        if (waited > timeoutMs) throw new Error(`timed out (got ${events.map((event) => event.type).join(', ')})`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

const LONG_INPUT = 'Please stream back this rather long sentence so that the answer takes many chunks to arrive here';

// Each test starts its own gateway (on PostgreSQL a new database and its migrations): seconds on a loaded machine.
describe('Responses WebSocket transport', { timeout: 60_000 }, () => {
  it('settles a response whose caller closed mid-stream as one whose caller left', async () => {
    const current = await start({}, 40);
    const raw = await open(current.url, current.key);
    raw.socket.send(JSON.stringify({ type: 'response.create', model: 'v-slow', input: LONG_INPUT }));
    await raw.until(() => raw.events.some((event) => event.type === 'response.output_text.delta'));
    raw.socket.close();
    await raw.closed;
    let rows = await usageRows({ gateway: current.gateway }, { accountId: '', keyId: current.keyId, key: current.key });
    for (let waited = 0; rows.length === 0 && waited < 5000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      rows = await usageRows({ gateway: current.gateway }, { accountId: '', keyId: current.keyId, key: current.key });
    }
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: 499, endpoint: '/v1/responses' });
  });

  it('closes a connection idle for REALTIME_IDLE_SECONDS with 1000', async () => {
    const current = await start({ REALTIME_IDLE_SECONDS: '1' }, 0);
    const raw = await open(current.url, current.key);
    const startedAt = Date.now();
    const closed = await raw.closed;
    expect(closed).toMatchObject({ code: 1000, reason: 'idle timeout' });
    // Closed for its second of idleness, far from the default 300 s (the idle check runs each second; a loaded
    // machine delays it by seconds more).
    expect(Date.now() - startedAt).toBeLessThan(10_000);
  });

  it('lets the running response finish when the instance drains, refuses new ones, then closes with 1001', async () => {
    // The connection closes as soon as its response is done; the long drain only leaves a loaded machine room to finish it.
    const current = await start({ DRAIN_SECONDS: '8' }, 30);
    const raw = await open(current.url, current.key);
    raw.socket.send(JSON.stringify({ type: 'response.create', model: 'v-slow', input: LONG_INPUT }));
    await raw.until(() => raw.events.some((event) => event.type === 'response.output_text.delta'));
    const closing = current.gateway.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    raw.socket.send(JSON.stringify({ type: 'response.create', model: 'v-slow', input: 'Another' }));
    const closed = await raw.closed;
    expect(closed.code).toBe(1001);
    expect(raw.events.some((event) => event.type === 'response.completed')).toBe(true);
    expect(raw.events.find((event) => event.type === 'error')).toMatchObject({ status: 503, error: { code: 'overloaded' } });
    await closing;
    gateway = null;
  });
});
