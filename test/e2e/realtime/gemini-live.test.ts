/**
 * Gemini Live sessions through the gateway at Google's own path, with the `@google/genai` SDK's `ai.live.connect`:
 * the mock upstream proven with the SDK pointed straight at it, each turn billed exactly from its usage metadata as it
 * happens, the session closed with 1008 before a turn the balance cannot pay, refusals before the handshake (a
 * wrong key) and after it (the protocol's close code and reason), failover at connect, a caller that leaves mid-turn
 * billed for what the upstream reports, and a draining instance that says `goAway` and closes with 1001.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { INPUT_PCM16_BYTES_PER_TOKEN } from '../../support/mock-gemini-live.js';
import { balanceNano, newAccount, usageRows } from './realtime-support.js';
import { LIVE_MODEL, LIVE_PATH, LIVE_UPSTREAM_MODEL, sdkLive, sdkRefusal, startLiveSetup, turnCostNano, type LiveSetup, type SdkLive } from './gemini-live-support.js';

let setup: LiveSetup;

beforeAll(async () => {
  setup = await startLiveSetup();
});

afterAll(async () => {
  await setup?.close();
});

/** One user turn: text, or `audioTokens` of PCM16 at 16 kHz ended as voice activity detection would end it. */
function textTurn(live: SdkLive, text: string): void {
  live.session.sendClientContent({ turns: text, turnComplete: true });
}

function audioTurn(live: SdkLive, audioTokens: number): void {
  const data = Buffer.alloc(audioTokens * INPUT_PCM16_BYTES_PER_TOKEN, 3).toString('base64');
  live.session.sendRealtimeInput({ audio: { data, mimeType: 'audio/pcm;rate=16000' } });
  live.session.sendRealtimeInput({ audioStreamEnd: true });
}

/** A raw WebSocket to the gateway's live path; resolves with the socket once open or the HTTP refusal. */
function openRawLive(url: string, headers: Record<string, string> = {}): Promise<WebSocket | { status: number; body: { error: { code: string; status: string; message: string } } }> {
  const socket = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(body) as never }));
    });
    socket.once('error', reject);
  });
}

function closedOf(socket: WebSocket): Promise<{ code: number; reason: string }> {
  return new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
}

describe('the mock Gemini Live upstream', () => {
  it('speaks the protocol the SDK expects when the SDK connects to it directly', async () => {
    const live = await sdkLive(setup.upstream.url, 'g-upstream-key', LIVE_UPSTREAM_MODEL);
    const connection = setup.upstream.connections.at(-1);
    // The SDK's own URL: a double slash before `ws`, the key in the query.
    expect(connection?.url).toBe(`/${LIVE_PATH}?key=g-upstream-key`);
    expect(connection?.setup).toMatchObject({ model: `models/${LIVE_UPSTREAM_MODEL}`, generationConfig: { responseModalities: ['AUDIO'] } });
    textTurn(live, 'Hello there');
    await live.waitForUsage(1);
    audioTurn(live, 40);
    await live.waitForUsage(2);
    const audio = live.messages.filter((message) => message.serverContent?.modelTurn?.parts?.[0]?.inlineData?.mimeType === 'audio/pcm;rate=24000');
    expect(audio).toHaveLength(6);
    expect(live.messages.filter((message) => message.serverContent?.turnComplete === true)).toHaveLength(2);
    const second = live.messages.filter((message) => message.usageMetadata !== undefined)[1]?.usageMetadata;
    expect(second?.promptTokensDetails).toContainEqual({ modality: 'AUDIO', tokenCount: 40 });
    expect(second?.responseTokensDetails).toEqual([{ modality: 'AUDIO', tokenCount: 150 }]);
    live.session.close();
    await live.closed;
  });

  it('closes with the protocol\'s code and reason for a wrong key or an unknown model, as Google does', async () => {
    expect(await sdkRefusal(setup.upstream.url, 'wrong', LIVE_UPSTREAM_MODEL)).toMatch(/code 1007.*API key not valid/);
    expect(await sdkRefusal(setup.upstream.url, 'g-upstream-key', 'nope')).toMatch(/code 1008.*models\/nope is not found/);
  });
});

describe('Gemini Live through the gateway', () => {
  it('proxies an SDK session to the Gemini channel and charges each of three turns exactly, as it happens', async () => {
    const account = await newAccount(setup);
    const before = await balanceNano(setup, account);
    const usagesBefore = setup.upstream.usages.length;
    const live = await sdkLive(setup.gateway.url, account.key, LIVE_MODEL);
    const upstreamConnection = setup.upstream.connections.at(-1);
    // The channel's key in its header, never in the URL; the setup carries the channel's model name.
    expect(upstreamConnection?.url).toBe(LIVE_PATH);
    expect(upstreamConnection?.headers['x-goog-api-key']).toBe('g-upstream-key');
    expect(upstreamConnection?.setup).toMatchObject({ model: `models/${LIVE_UPSTREAM_MODEL}`, generationConfig: { responseModalities: ['AUDIO'] } });
    expect(live.messages[0]?.setupComplete).toBeDefined();
    const charges: bigint[] = [];
    for (let index = 1; index <= 3; index += 1) {
      if (index === 2) audioTurn(live, 64);
      else textTurn(live, `Question number ${index}, please answer.`);
      await live.waitForUsage(index);
      const usage = setup.upstream.usages[usagesBefore + index - 1];
      if (usage === undefined) throw new Error('no usage');
      charges.push(turnCostNano(usage));
      // Billed as it happens: the balance shows this turn while the session is still open.
      expect(await balanceNano(setup, account)).toBe(before - charges.reduce((sum, charge) => sum + charge, 0n));
    }
    // Text, audio and cached tokens were all in play, each at its own price.
    const usages = setup.upstream.usages.slice(usagesBefore);
    expect(usages[1]?.promptTokensDetails).toContainEqual({ modality: 'AUDIO', tokenCount: 64 });
    expect(usages[2]?.cacheTokensDetails).toContainEqual({ modality: 'AUDIO', tokenCount: 64 });
    live.session.close();
    await live.closed;
    const rows = (await usageRows(setup, account)).sort((left, right) => left.request_id.localeCompare(right.request_id));
    expect(rows).toHaveLength(3);
    const sessionId = rows[0]?.request_id.split('.')[0];
    expect(rows.map((row) => row.request_id)).toEqual([1, 2, 3].map((index) => `${sessionId}.${index}`));
    for (const [index, row] of rows.entries()) {
      expect(row).toMatchObject({ model: LIVE_MODEL, protocol: 'gemini-live', endpoint: LIVE_PATH, status: 200, error_code: null });
      expect(BigInt(Math.round(row.cost_usd * 1e9))).toBe(charges[index]);
    }
    expect(rows[2]?.cached_tokens).toBeGreaterThan(0);
    expect(await balanceNano(setup, account)).toBe(before - charges.reduce((sum, charge) => sum + charge, 0n));
  });

  it('passes tool calls and tool responses through, each generation billed', async () => {
    const account = await newAccount(setup);
    const before = await balanceNano(setup, account);
    const usagesBefore = setup.upstream.usages.length;
    const live = await sdkLive(setup.gateway.url, account.key, LIVE_MODEL, { responseModalities: ['TEXT' as never], tools: [{ functionDeclarations: [{ name: 'get_weather', description: 'Weather of a city' }] }] });
    textTurn(live, 'Please get_weather for Paris.');
    const call = await live.waitFor((message) => message.toolCall !== undefined);
    const functionCall = call.toolCall?.functionCalls?.[0];
    expect(functionCall).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
    live.session.sendToolResponse({ functionResponses: [{ id: functionCall?.id, name: 'get_weather', response: { forecast: 'sunny' } }] });
    await live.waitForUsage(2);
    expect(live.messages.some((message) => message.serverContent?.modelTurn?.parts?.[0]?.text === 'word0 ')).toBe(true);
    live.session.close();
    await live.closed;
    const usages = setup.upstream.usages.slice(usagesBefore);
    expect(usages).toHaveLength(2);
    expect(before - (await balanceNano(setup, account))).toBe(usages.reduce((sum, usage) => sum + turnCostNano(usage), 0n));
  });

  it('refuses a wrong key before the handshake with Google\'s error object, and the SDK sees it fail', async () => {
    const refused = await openRawLive(`${setup.gateway.url.replace(/^http/, 'ws')}${LIVE_PATH}?key=sk-wrong`);
    expect(refused).toMatchObject({ status: 401, body: { error: { code: 'invalid_api_key', status: 'UNAUTHENTICATED' } } });
    expect(await sdkRefusal(setup.gateway.url, 'sk-wrong', LIVE_MODEL)).toMatch(/failed before setup completed/);
    const missing = await openRawLive(`${setup.gateway.url.replace(/^http/, 'ws')}${LIVE_PATH}`);
    expect(missing).toMatchObject({ status: 401 });
  });

  it('closes with the protocol\'s code and reason an unknown model, a model outside the allowlist and a first message that is not setup', async () => {
    const account = await newAccount(setup, 20, { allowed_models: ['other-model'] });
    expect(await sdkRefusal(setup.gateway.url, account.key, LIVE_MODEL)).toMatch(/code 1008.*live-voice/);
    const other = await newAccount(setup);
    expect(await sdkRefusal(setup.gateway.url, other.key, 'nope')).toMatch(/code 1008.*nope/);
    const socket = await openRawLive(`${setup.gateway.url.replace(/^http/, 'ws')}${LIVE_PATH}`, { 'x-goog-api-key': other.key });
    if (!(socket instanceof WebSocket)) throw new Error('refused');
    const closed = closedOf(socket);
    socket.send(JSON.stringify({ clientContent: { turns: [], turnComplete: true } }));
    const close = await closed;
    expect(close.code).toBe(1007);
    expect(close.reason).toMatch(/setup/);
  });

  it('closes with 1008 and the reason a session the balance cannot hold a first turn for, before any upstream is opened', async () => {
    const broke = await newAccount(setup, 0);
    const connections = setup.upstream.connections.length;
    expect(await sdkRefusal(setup.gateway.url, broke.key, LIVE_MODEL)).toMatch(/code 1008.*balance/i);
    expect(setup.upstream.connections).toHaveLength(connections);
  });

  it('counts a session as one request in flight for its whole life (the key\'s concurrency)', async () => {
    const account = await newAccount(setup, 20, { concurrency: 1 });
    const first = await sdkLive(setup.gateway.url, account.key, LIVE_MODEL);
    expect(await sdkRefusal(setup.gateway.url, account.key, LIVE_MODEL)).toMatch(/code 1013/);
    first.session.close();
    await first.closed;
    await new Promise((resolve) => setTimeout(resolve, 100));
    const second = await sdkLive(setup.gateway.url, account.key, LIVE_MODEL);
    second.session.close();
    await second.closed;
  });

  it('closes the session with 1008 before a turn the balance cannot pay', async () => {
    const probe = await newAccount(setup);
    // What two turns of this shape cost, measured on a well-funded account (the mock's usage is deterministic).
    const measured = await sdkLive(setup.gateway.url, probe.key, LIVE_MODEL);
    const usagesBefore = setup.upstream.usages.length;
    textTurn(measured, 'One.');
    await measured.waitForUsage(1);
    textTurn(measured, 'Two.');
    await measured.waitForUsage(2);
    measured.session.close();
    await measured.closed;
    const [first, second] = setup.upstream.usages.slice(usagesBefore);
    if (first === undefined || second === undefined) throw new Error('no usage');
    const twoTurns = turnCostNano(first) + turnCostNano(second);
    // Before a turn the gateway holds its upper bound: the context so far as audio input and 4,096 audio output
    // tokens. The balance pays both turns and falls one nano-dollar short of the third one's hold.
    const thirdHold = (BigInt(second.promptTokenCount + second.responseTokenCount) * 3_000_000_000n + 4096n * 12_000_000_000n + 999_999n) / 1_000_000n;
    const account = await newAccount(setup, Number(twoTurns + thirdHold - 1n) / 1e9);
    const before = await balanceNano(setup, account);
    const live = await sdkLive(setup.gateway.url, account.key, LIVE_MODEL);
    textTurn(live, 'One.');
    await live.waitForUsage(1);
    textTurn(live, 'Two.');
    await live.waitForUsage(2);
    const close = await live.closed;
    expect(close.code).toBe(1008);
    expect(close.reason).toMatch(/balance/i);
    const rows = await usageRows(setup, account);
    expect(rows).toHaveLength(2);
    expect(before - (await balanceNano(setup, account))).toBe(twoTurns);
  });
});

describe('Gemini Live transport', () => {
  let own: LiveSetup | null = null;

  afterEach(async () => {
    await own?.close();
    own = null;
  });

  it('fails over at connect time when a channel refuses the handshake or closes before setupComplete', async () => {
    own = await startLiveSetup({}, {}, 2);
    const account = await newAccount(own);
    own.upstream.setFault({ kind: 'close', code: 1011, reason: 'Internal error encountered.', times: 1 });
    const live = await sdkLive(own.gateway.url, account.key, LIVE_MODEL);
    expect(own.upstream.connections).toHaveLength(2);
    live.session.close();
    await live.closed;
    own.upstream.setFault({ kind: 'status', status: 503, times: 1 });
    const again = await sdkLive(own.gateway.url, account.key, LIVE_MODEL);
    again.session.close();
    await again.closed;
    own.upstream.setFault({ kind: 'close', code: 1011, reason: 'Internal error encountered.', times: 10 });
    expect(await sdkRefusal(own.gateway.url, account.key, LIVE_MODEL)).toMatch(/code 1011/);
  });

  it('bills a turn the caller cut off at what the upstream reports for it', async () => {
    own = await startLiveSetup({}, { chunks: 40, chunkDelayMs: 20 });
    const account = await newAccount(own);
    const before = await balanceNano(own, account);
    const live = await sdkLive(own.gateway.url, account.key, LIVE_MODEL);
    textTurn(live, 'Tell me a long story.');
    await live.waitFor((message) => message.serverContent?.modelTurn !== undefined);
    live.session.close();
    await live.closed;
    // Gemini has no cancel: the gateway keeps the upstream a moment for the turn's report. The rest of the turn is
    // streamed at once now, so a loaded machine's slow timers cannot stretch it past that moment.
    own.upstream.setOptions({ chunkDelayMs: 0 });
    const upstream = own.upstream.connections.at(-1);
    for (let waited = 0; upstream?.socket.readyState !== upstream?.socket.CLOSED && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    const usage = own.upstream.usages.at(-1);
    if (usage === undefined) throw new Error('no usage');
    const rows = await usageRows(own, account);
    expect(rows).toHaveLength(1);
    // The charge of a turn settled as its session ends may commit a moment after its usage row is written.
    let charged = before - (await balanceNano(own, account));
    for (let waited = 0; charged === 0n && waited < 5000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      charged = before - (await balanceNano(own, account));
    }
    expect(charged).toBe(turnCostNano(usage));
  });

  it('tells its sessions goAway and closes them with 1001 when the instance drains', async () => {
    // Three seconds of drain: an idle session ends at once, and by the realtime deadline (half a second before the
    // drain's end) at the latest, with room for a loaded machine's late timers.
    own = await startLiveSetup({ DRAIN_SECONDS: '3' });
    const account = await newAccount(own);
    const live = await sdkLive(own.gateway.url, account.key, LIVE_MODEL);
    const startedAt = Date.now();
    const closing = own.gateway.close();
    const goAway = await live.waitFor((message) => message.goAway !== undefined, 5000);
    expect(goAway.goAway?.timeLeft).toMatch(/^\d+s$/);
    const close = await live.closed;
    expect(close.code).toBe(1001);
    expect(close.reason).toMatch(/restarting/);
    expect(Date.now() - startedAt).toBeLessThan(2500);
    await closing;
  });
});
