/**
 * OpenAI Realtime sessions through the gateway: the `openai` SDK's WebSocket client (over TLS, as it insists on wss:)
 * and a browser-style WebSocket with the subprotocol key, each response billed exactly as the upstream reported it,
 * the session cut before a response the balance cannot pay, and refusals answered before the handshake.
 */
import OpenAI, { AzureOpenAI } from 'openai';
import { OpenAIRealtimeWebSocket } from 'openai/realtime/websocket';
import { OpenAIRealtimeWS } from 'openai/realtime/ws';
import type { RealtimeServerEvent } from 'openai/resources/realtime/realtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startTlsTerminator, type TlsTerminator } from '../../support/tls-terminator.js';
import { PCM16_BYTES_PER_TOKEN } from '../../support/mock-openai-realtime.js';
import { balanceNano, MODEL, newAccount, openRaw, PRICES, responseCostNano, startRealtimeSetup, UPSTREAM_MODEL, usageRows, type RawSession, type RealtimeSetup, type UsageRow } from './realtime-support.js';

let setup: RealtimeSetup;
let gatewayTls: TlsTerminator;
let upstreamTls: TlsTerminator;

beforeAll(async () => {
  setup = await startRealtimeSetup();
  gatewayTls = await startTlsTerminator(setup.gateway.url);
  upstreamTls = await startTlsTerminator(setup.upstream.url);
});

afterAll(async () => {
  await gatewayTls?.close();
  await upstreamTls?.close();
  await setup?.close();
});

/** Opens the SDK's realtime client at `baseURL` and collects its events. */
async function sdkSession(baseURL: string, apiKey: string, model: string, ca: string): Promise<{ rt: OpenAIRealtimeWS; events: RealtimeServerEvent[]; waitFor(type: string, count?: number): Promise<void> }> {
  const client = new OpenAI({ apiKey, baseURL });
  const rt = new OpenAIRealtimeWS({ model, options: { ca } }, client);
  const events: RealtimeServerEvent[] = [];
  rt.on('event', (event) => events.push(event));
  rt.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    rt.socket.once('open', () => resolve());
    rt.socket.once('error', reject);
  });
  return {
    rt,
    events,
    async waitFor(type, count = 1) {
      for (let waited = 0; events.filter((event) => event.type === type).length < count; waited += 20) {
        if (waited > 10_000) throw new Error(`no ${type} (${events.map((event) => event.type).join(', ')})`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

/** One user turn of text and `audioTokens` of committed audio, then a response. */
function turn(rt: OpenAIRealtimeWS, text: string, audioTokens: number): void {
  rt.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text }] } });
  if (audioTokens > 0) {
    rt.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(audioTokens * PCM16_BYTES_PER_TOKEN, 7).toString('base64') });
    rt.send({ type: 'input_audio_buffer.commit' });
  }
  rt.send({ type: 'response.create' });
}

describe('the mock upstream', () => {
  it('speaks the protocol the SDK expects when the SDK connects to it directly', async () => {
    const session = await sdkSession(`${upstreamTls.url}/v1`, 'sk-upstream-test', UPSTREAM_MODEL, upstreamTls.ca);
    turn(session.rt, 'Hello there', 30);
    await session.waitFor('response.done');
    const done = session.events.find((event) => event.type === 'response.done');
    expect(done?.type === 'response.done' && done.response.usage?.input_token_details?.audio_tokens).toBe(30);
    expect(session.events.map((event) => event.type)).toEqual(expect.arrayContaining(['session.created', 'conversation.item.created', 'input_audio_buffer.committed', 'response.created', 'response.output_audio.delta', 'response.done']));
    session.rt.close();
  });
});

describe('the mock Azure OpenAI realtime upstream', () => {
  it('speaks the protocol the SDK\'s Azure client expects (the v1 URL and the api-key header) when it connects directly', async () => {
    const azure = new AzureOpenAI({ apiKey: 'sk-upstream-test', endpoint: upstreamTls.url, apiVersion: '2025-04-01-preview', deployment: 'my-realtime-deployment' });
    const rt = await OpenAIRealtimeWS.azure(azure, { options: { ca: upstreamTls.ca } });
    const events: RealtimeServerEvent[] = [];
    rt.on('event', (event) => events.push(event));
    rt.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      rt.socket.once('open', () => resolve());
      rt.socket.once('error', reject);
    });
    const connection = setup.upstream.connections.at(-1);
    expect(connection?.url).toBe('/openai/v1/realtime?model=my-realtime-deployment');
    expect(connection?.headers['api-key']).toBe('sk-upstream-test');
    rt.send({ type: 'response.create' });
    for (let waited = 0; !events.some((event) => event.type === 'response.done'); waited += 20) {
      if (waited > 10_000) throw new Error('no response.done');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    rt.close();
  });
});

describe('GET /v1/realtime', () => {
  it('proxies an SDK session to the channel and charges each of three responses exactly, as it happens', async () => {
    const account = await newAccount(setup);
    const before = await balanceNano(setup, account);
    const usagesBefore = setup.upstream.usages.length;
    const session = await sdkSession(`${gatewayTls.url}/v1`, account.key, MODEL, gatewayTls.ca);
    await session.waitFor('session.created');
    const charges: bigint[] = [];
    for (let index = 1; index <= 3; index += 1) {
      turn(session.rt, `Question number ${index}, please answer.`, 25 * index);
      await session.waitFor('response.done', index);
      const usage = setup.upstream.usages[usagesBefore + index - 1];
      if (usage === undefined) throw new Error('no usage');
      charges.push(responseCostNano(usage));
      // Billed as it happens: the balance already shows this response while the session is still open.
      expect(await balanceNano(setup, account)).toBe(before - charges.reduce((sum, charge) => sum + charge, 0n));
    }
    const upstreamConnection = setup.upstream.connections.at(-1);
    expect(upstreamConnection?.url).toBe(`/v1/realtime?model=${UPSTREAM_MODEL}`);
    expect(upstreamConnection?.headers.authorization).toBe('Bearer sk-upstream-test');
    const closed = new Promise((resolve) => session.rt.socket.once('close', resolve));
    session.rt.close();
    await closed;
    const rows = (await usageRows(setup, account)).sort((left, right) => left.request_id.localeCompare(right.request_id));
    expect(rows).toHaveLength(3);
    const sessionId = rows[0]?.request_id.split('.')[0];
    expect(rows.map((row) => row.request_id)).toEqual([1, 2, 3].map((index) => `${sessionId}.${index}`));
    // The session's rows are found by its id.
    const bySession = await setup.gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?session_id=${sessionId}`);
    expect(bySession.body.data.map((row) => row.request_id).sort()).toEqual(rows.map((row) => row.request_id));
    for (const [index, row] of rows.entries()) {
      expect(row).toMatchObject({ model: MODEL, protocol: 'openai-realtime', endpoint: '/v1/realtime', status: 200, error_code: null });
      expect(BigInt(Math.round(row.cost_usd * 1e9))).toBe(charges[index]);
    }
    expect(rows[1]?.cached_tokens).toBeGreaterThan(0);
    expect(await balanceNano(setup, account)).toBe(before - charges.reduce((sum, charge) => sum + charge, 0n));
  });

  it('takes the key from a browser subprotocol and answers with the realtime subprotocol only', async () => {
    const account = await newAccount(setup);
    const session = await openRaw(setup.url, { protocols: ['realtime', `openai-insecure-api-key.${account.key}`] });
    expect(session.socket.protocol).toBe('realtime');
    await session.next('session.created');
    session.socket.close();
    await session.closed;
  });

  it('serves the SDK\'s browser client: a native WebSocket with a client secret in the subprotocol key form', async () => {
    const account = await newAccount(setup);
    const secret = await new OpenAI({ apiKey: account.key, baseURL: setup.gateway.baseURL }).realtime.clientSecrets.create({ session: { type: 'realtime', model: MODEL } });
    // The runtime's WebSocket as a browser has it: a URL and subprotocols, no headers (the test's CA aside).
    const offered: string[][] = [];
    const { ca } = gatewayTls;
    class NativeWebSocket extends WebSocket {
      constructor(url: string, protocols: string | string[] = []) {
        offered.push([protocols].flat());
        super(url, protocols, { ca });
      }
    }
    const runtimeWebSocket: unknown = Reflect.get(globalThis, 'WebSocket');
    Reflect.set(globalThis, 'WebSocket', NativeWebSocket);
    let rt: OpenAIRealtimeWebSocket;
    try {
      rt = new OpenAIRealtimeWebSocket({ model: MODEL }, new OpenAI({ apiKey: secret.value, baseURL: `${gatewayTls.url}/v1` }));
    } finally {
      Reflect.set(globalThis, 'WebSocket', runtimeWebSocket);
    }
    const events: RealtimeServerEvent[] = [];
    rt.on('event', (event) => events.push(event));
    rt.on('error', () => undefined);
    await new Promise((resolve, reject) => {
      rt.socket.addEventListener('open', resolve);
      rt.socket.addEventListener('error', reject);
    });
    expect(offered).toEqual([['realtime', `openai-insecure-api-key.${secret.value}`]]);
    expect(rt.socket.protocol).toBe('realtime');
    rt.send({ type: 'response.create' });
    for (let waited = 0; !events.some((event) => event.type === 'response.done'); waited += 20) {
      if (waited > 10_000) throw new Error(`no response.done (${events.map((event) => event.type).join(', ')})`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const closed = new Promise((resolve) => rt.socket.addEventListener('close', resolve));
    rt.close();
    await closed;
    const usage = setup.upstream.usages.at(-1);
    if (usage === undefined) throw new Error('no usage');
    // Billed to the key that minted the secret.
    const rows = await usageRows(setup, account);
    expect(rows).toHaveLength(1);
    expect(BigInt(Math.round((rows[0]?.cost_usd ?? 0) * 1e9))).toBe(responseCostNano(usage));
  });

  it('refuses before the handshake with the error object: no key, a wrong key, a model outside the allowlist, an unknown model, no money', async () => {
    const account = await newAccount(setup, 20, { allowed_models: ['other-model'] });
    const refusal = (url: string, options: Parameters<typeof openRaw>[1]) => openRaw(url, options).then(() => null, (error: { status: number; body: { error: { code: string } } }) => [error.status, error.body.error.code]);
    expect(await refusal(setup.url, {})).toEqual([401, 'missing_api_key']);
    expect(await refusal(setup.url, { key: 'sk-wrong' })).toEqual([401, 'invalid_api_key']);
    expect(await refusal(setup.url, { key: account.key })).toEqual([403, 'model_not_allowed']);
    const other = await newAccount(setup);
    expect(await refusal(setup.url.replace(`model=${MODEL}`, 'model=nope'), { key: other.key })).toEqual([400, 'model_not_found']);
    expect(await refusal(setup.url.replace(`?model=${MODEL}`, ''), { key: other.key })).toEqual([400, 'bad_request']);
    // Admission holds the first response's money before any upstream is opened.
    const broke = await newAccount(setup, 0);
    const connections = setup.upstream.connections.length;
    expect(await refusal(setup.url, { key: broke.key })).toEqual([402, 'insufficient_balance']);
    expect(setup.upstream.connections).toHaveLength(connections);
  });

  it('counts a session as one request in flight for its whole life (the key\'s concurrency)', async () => {
    const account = await newAccount(setup, 20, { concurrency: 1 });
    const first = await openRaw(setup.url, { key: account.key });
    await first.next('session.created');
    const refused = await openRaw(setup.url, { key: account.key }).then(() => null, (error: { status: number; body: { error: { code: string } } }) => [error.status, error.body.error.code]);
    expect(refused).toEqual([429, 'rate_limit_exceeded']);
    first.socket.close();
    await first.closed;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await openRaw(setup.url, { key: account.key });
    await second.next('session.created');
    second.socket.close();
    await second.closed;
  });

  it.each([
    ['deployment', 'voice-azure', '2025-04-01-preview', '/openai/realtime?api-version=2025-04-01-preview&deployment=my-realtime-deployment'],
    ['v1', 'voice-azure-v1', 'v1', '/openai/v1/realtime?model=my-realtime-deployment'],
  ])('proxies to an Azure OpenAI channel (%s URL) with the api-key header, and bills it the same way', async (_form, modelId, apiVersion, expectedUrl) => {
    const model = await setup.gateway.admin('POST', '/admin/models', {
      id: modelId,
      kind: 'chat',
      pricing: { input_per_mtok: PRICES.text, cached_input_per_mtok: PRICES.cachedText, output_per_mtok: PRICES.outText, input_audio_per_mtok: PRICES.audio, cached_input_audio_per_mtok: PRICES.cachedAudio, output_audio_per_mtok: PRICES.outAudio },
    });
    expect(model.status).toBe(201);
    const channel = await setup.gateway.admin('POST', '/admin/channels', { name: `azure-${modelId}`, type: 'azure-openai', base_url: `${setup.upstream.url}/`, api_key: 'sk-upstream-test', models: { [modelId]: 'my-realtime-deployment' }, settings: { api_version: apiVersion } });
    expect(channel.status).toBe(201);
    await setup.gateway.gateway.services.catalog.reload();
    const account = await newAccount(setup);
    const before = await balanceNano(setup, account);
    const session = await openRaw(setup.url.replace(`model=${MODEL}`, `model=${modelId}`), { key: account.key });
    await session.next('session.created');
    const connection = setup.upstream.connections.at(-1);
    expect(connection?.url).toBe(expectedUrl);
    expect(connection?.headers['api-key']).toBe('sk-upstream-test');
    expect(connection?.headers.authorization).toBeUndefined();
    session.send({ type: 'response.create' });
    await session.next('response.done');
    const usage = setup.upstream.usages.at(-1);
    if (usage === undefined) throw new Error('no usage');
    session.socket.close();
    await session.closed;
    expect(before - (await balanceNano(setup, account))).toBe(responseCostNano(usage));
    expect((await usageRows(setup, account))[0]).toMatchObject({ model: modelId, protocol: 'openai-realtime', endpoint: '/v1/realtime' });
  });

  it('counts every response of a session in the token-per-minute windows, not the first alone', async () => {
    const limit = 100_000;
    const account = await newAccount(setup, 20, { tpm: limit });
    // Token windows are minutes aligned to the epoch: both sessions must fall in one.
    const leftInWindow = 60_000 - (Date.now() % 60_000);
    if (leftInWindow < 10_000) await new Promise((resolve) => setTimeout(resolve, leftInWindow + 50));
    const usagesBefore = setup.upstream.usages.length;
    const first = await openRaw(setup.url, { key: account.key });
    // Admission charges the first response's estimate: 4,096 output tokens.
    expect(first.upgradeHeaders['x-ratelimit-remaining-tokens']).toBe(String(limit - 4096));
    for (let index = 0; index < 3; index += 1) {
      first.send({ type: 'conversation.item.create', item: { type: 'message', role: 'user', content: [{ type: 'input_text', text: `Turn ${index} of the conversation.` }] } });
      first.send({ type: 'response.create' });
      await first.next('response.done');
    }
    first.socket.close();
    await first.closed;
    // The three responses are settled (their usage rows written, their tokens corrected in the window): waited for,
    // as a loaded machine may take longer than a fixed pause.
    await expect.poll(async () => (await usageRows(setup, account)).length, { timeout: 15_000, interval: 50 }).toBeGreaterThanOrEqual(3);
    const used = setup.upstream.usages.slice(usagesBefore).reduce((sum, usage) => sum + usage.total_tokens, 0);
    expect(setup.upstream.usages.length - usagesBefore).toBe(3);
    // The next session sees all three responses' tokens in the window (and its own first estimate), nothing more.
    const second = await openRaw(setup.url, { key: account.key });
    expect(second.upgradeHeaders['x-ratelimit-remaining-tokens']).toBe(String(limit - used - 4096));
    second.socket.close();
    await second.closed;
  });

  it('ends the session with a rate-limit error event and close 1008 before a response its token window cannot take', async () => {
    // The window takes the first response's estimate (4,096 tokens) but not, after it, the second one's.
    const account = await newAccount(setup, 20, { tpm: 4200 });
    const leftInWindow = 60_000 - (Date.now() % 60_000);
    if (leftInWindow < 10_000) await new Promise((resolve) => setTimeout(resolve, leftInWindow + 50));
    const session = await openRaw(setup.url, { key: account.key });
    session.send({ type: 'response.create' });
    await session.next('response.done');
    session.send({ type: 'response.create' });
    const error = await session.next('error');
    expect(error).toMatchObject({ type: 'error', error: { code: 'rate_limit_exceeded' } });
    expect((await session.closed).code).toBe(1008);
    const rows = await usageRows(setup, account);
    expect(rows).toHaveLength(1);
  });

  it('ends the session with an error event and close 1008 before a response the balance cannot pay', async () => {
    const probe = await newAccount(setup);
    // What two responses of this shape cost, measured on a well-funded account (the mock's usage is deterministic).
    const measured = await openRaw(setup.url, { key: probe.key });
    const usagesBefore = setup.upstream.usages.length;
    for (let index = 0; index < 2; index += 1) {
      measured.send({ type: 'response.create' });
      await measured.next('response.done');
    }
    measured.socket.close();
    await measured.closed;
    const [first, second] = setup.upstream.usages.slice(usagesBefore);
    if (first === undefined || second === undefined) throw new Error('no usage');
    const twoResponses = responseCostNano(first) + responseCostNano(second);
    // Before a response the gateway holds its upper bound: the conversation so far as audio input and 4,096 audio
    // output tokens. The balance pays both responses and falls one nano-dollar short of the third one's hold.
    const thirdHold = (BigInt(second.total_tokens) * 32_000_000_000n + 4096n * 64_000_000_000n + 999_999n) / 1_000_000n;
    const account = await newAccount(setup, Number(twoResponses + thirdHold - 1n) / 1e9);
    const before = await balanceNano(setup, account);
    const session = await openRaw(setup.url, { key: account.key });
    session.send({ type: 'response.create' });
    await session.next('response.done');
    session.send({ type: 'response.create' });
    await session.next('response.done');
    const error = await session.next('error');
    expect(error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'insufficient_balance' } });
    expect((await session.closed).code).toBe(1008);
    const rows = await usageRows(setup, account);
    expect(rows).toHaveLength(2);
    const after = await balanceNano(setup, account);
    expect(before - after).toBe(twoResponses);
  });

  it('lets two sessions race one balance: each response charged once as its own request, neither overdrawing, both ended when it runs out', async () => {
    // Both admissions hold a first response (4,096 audio output tokens); the balance pays a few responses more, each
    // with 500 tokens of new audio, whichever session asks first.
    const firstHold = (4096n * 64_000_000_000n + 999_999n) / 1_000_000n;
    const account = await newAccount(setup, Number(2n * firstHold + 50_000_000n) / 1e9);
    const before = await balanceNano(setup, account);
    const usagesBefore = setup.upstream.usages.length;
    const sessions = await Promise.all([openRaw(setup.url, { key: account.key }), openRaw(setup.url, { key: account.key })]);
    const audio = Buffer.alloc(500 * PCM16_BYTES_PER_TOKEN, 7).toString('base64');
    /** Responses until the session is ended: how many were done, and the error that ended it. */
    const runOut = async (session: RawSession): Promise<{ responses: number; error: Record<string, unknown> | undefined }> => {
      let from = 0;
      for (let responses = 0; responses < 30; responses += 1) {
        session.send({ type: 'input_audio_buffer.append', audio });
        session.send({ type: 'input_audio_buffer.commit' });
        session.send({ type: 'response.create' });
        for (const deadline = Date.now() + 10_000; ;) {
          const at = session.events.findIndex((event, index) => index >= from && (event.type === 'response.done' || event.type === 'error'));
          const ending = session.events[at];
          if (ending?.type === 'error') return { responses, error: ending };
          if (ending !== undefined) {
            from = at + 1;
            break;
          }
          if (session.socket.readyState === session.socket.CLOSED || Date.now() > deadline) throw new Error(`no response.done (${session.events.map((event) => event.type).join(', ')})`);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
      }
      throw new Error('the balance never ran out');
    };
    const ran = await Promise.all(sessions.map(runOut));
    for (const [index, session] of sessions.entries()) {
      expect(ran[index]?.responses).toBeGreaterThanOrEqual(1);
      expect(ran[index]?.error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', code: 'insufficient_balance' } });
      expect((await session.closed).code).toBe(1008);
    }
    const usages = setup.upstream.usages.slice(usagesBefore);
    expect(usages).toHaveLength((ran[0]?.responses ?? 0) + (ran[1]?.responses ?? 0));
    const charged = usages.reduce((sum, usage) => sum + responseCostNano(usage), 0n);
    const after = await balanceNano(setup, account);
    expect(before - after).toBe(charged);
    expect(after).toBeGreaterThanOrEqual(0n);
    // One row per response, `<session id>.<n>` in each session's order, and no row of a session itself.
    const rows = await usageRows(setup, account);
    for (const [index, session] of sessions.entries()) {
      const ids = rows.map((row) => row.request_id).filter((id) => id.startsWith(`${session.requestId ?? ''}.`)).sort();
      expect(ids).toEqual(Array.from({ length: ran[index]?.responses ?? 0 }, (_, at) => `${session.requestId ?? ''}.${at + 1}`).sort());
    }
    expect(rows).toHaveLength(usages.length);
    expect(rows.reduce((sum, row) => sum + BigInt(Math.round(row.cost_usd * 1e9)), 0n)).toBe(charged);
  });
});
