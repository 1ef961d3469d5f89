/**
 * Ephemeral tokens for Gemini Live through the gateway, as a browser uses them: the server mints one with
 * `@google/genai`'s `authTokens.create` (POST /v1alpha/auth_tokens) and the browser passes its name as the SDK's key,
 * which opens `…BidiGenerateContentConstrained?access_token=auth_tokens/…`. The token opens sessions of its one model
 * only, as many as its `uses`, until its `newSessionExpireTime`; what its setup fixes overrides the browser's; a
 * session ends when the token expires; a token past any of these is refused with the protocol's close (1008 and the
 * reason). A client secret of POST /v1/realtime/client_secrets opens Gemini Live sessions of its model too.
 */
import { GoogleGenAI, Modality, type AuthToken } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { balanceNano, newAccount, usageRows } from './realtime-support.js';
import { LIVE_MODEL, sdkLive, sdkRefusal, startLiveSetup, turnCostNano, type LiveSetup } from './gemini-live-support.js';

const CONSTRAINED_PATH = '/ws/google.ai.generativelanguage.v1alpha.GenerativeService.BidiGenerateContentConstrained';

let setup: LiveSetup;

beforeAll(async () => {
  setup = await startLiveSetup();
  // A second model the tokens are not for.
  await setup.gateway.admin('POST', '/admin/models', { id: 'other-live', kind: 'chat', pricing: { input_per_mtok: 1, output_per_mtok: 1 } });
  await setup.gateway.admin('POST', '/admin/channels', { name: 'live-other', type: 'gemini', base_url: setup.upstream.url, api_key: 'g-upstream-key', models: { 'other-live': 'gemini-live-2.5-flash-preview' } });
  await setup.gateway.gateway.services.catalog.reload();
});

afterAll(async () => {
  await setup?.close();
});

/** The server's side: a token minted with the account's real key, as Google's docs show it. */
function mint(key: string, config: Record<string, unknown>): Promise<AuthToken> {
  const server = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: setup.gateway.url, apiVersion: 'v1alpha' } });
  return server.authTokens.create({ config: config as never });
}

const inSeconds = (seconds: number): string => new Date(Date.now() + seconds * 1000).toISOString();

/** The browser's side: the token's name as the key, on v1alpha as the SDK wants ephemeral tokens. */
function browserLive(token: string, model = LIVE_MODEL, config: Record<string, unknown> = { responseModalities: [Modality.TEXT] }) {
  return sdkLive(setup.gateway.url, token, model, config, 'v1alpha');
}

describe('Gemini Live ephemeral tokens', () => {
  it('mints a token with authTokens.create that opens one session of its model, with the setup it fixes, billed to the minting key', async () => {
    const account = await newAccount(setup);
    const before = await balanceNano(setup, account);
    const token = await mint(account.key, {
      uses: 1,
      expireTime: inSeconds(600),
      newSessionExpireTime: inSeconds(60),
      liveConnectConstraints: { model: LIVE_MODEL, config: { responseModalities: [Modality.AUDIO], systemInstruction: 'Always answer in English.' } },
    });
    expect(token.name).toMatch(/^auth_tokens\/ek_/);
    const usagesBefore = setup.upstream.usages.length;
    const live = await browserLive(token.name ?? '');
    const upstream = setup.upstream.connections.at(-1);
    // The browser asked for TEXT; the token fixes AUDIO and the instructions.
    expect(upstream?.setup).toMatchObject({ generationConfig: { responseModalities: ['AUDIO'] }, systemInstruction: { parts: [{ text: 'Always answer in English.' }] } });
    expect(upstream?.headers['x-goog-api-key']).toBe('g-upstream-key');
    expect(upstream?.url).not.toContain('ek_');
    live.session.sendClientContent({ turns: 'Hello', turnComplete: true });
    await live.waitForUsage(1);
    live.session.close();
    await live.closed;
    const usage = setup.upstream.usages[usagesBefore];
    if (usage === undefined) throw new Error('no usage');
    expect(before - (await balanceNano(setup, account))).toBe(turnCostNano(usage));
    const rows = await usageRows(setup, account);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ model: LIVE_MODEL, protocol: 'gemini-live', endpoint: CONSTRAINED_PATH });
    // One use: the second session is refused with the protocol's close.
    expect(await sdkRefusal(setup.gateway.url, token.name ?? '', LIVE_MODEL, 'v1alpha')).toMatch(/code 1008.*all the sessions/);
  });

  it('opens as many sessions as its uses, of its model only', async () => {
    const account = await newAccount(setup);
    const token = await mint(account.key, { uses: 2, liveConnectConstraints: { model: LIVE_MODEL } });
    expect(await sdkRefusal(setup.gateway.url, token.name ?? '', 'other-live', 'v1alpha')).toMatch(/code 1008.*for model 'live-voice' only/);
    for (let use = 0; use < 2; use += 1) {
      const live = await browserLive(token.name ?? '');
      live.session.close();
      await live.closed;
    }
    expect(await sdkRefusal(setup.gateway.url, token.name ?? '', LIVE_MODEL, 'v1alpha')).toMatch(/code 1008.*all the sessions it may \(2\)/);
  });

  it('refuses a token past its newSessionExpireTime, an expired one and a forged one with close 1008', async () => {
    const account = await newAccount(setup);
    const late = await mint(account.key, { uses: 5, expireTime: inSeconds(600), newSessionExpireTime: inSeconds(1), liveConnectConstraints: { model: LIVE_MODEL } });
    const expired = await mint(account.key, { uses: 5, expireTime: inSeconds(1), liveConnectConstraints: { model: LIVE_MODEL } });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await sdkRefusal(setup.gateway.url, late.name ?? '', LIVE_MODEL, 'v1alpha')).toMatch(/code 1008.*newSessionExpireTime/);
    expect(await sdkRefusal(setup.gateway.url, expired.name ?? '', LIVE_MODEL, 'v1alpha')).toMatch(/code 1008.*expired/);
    const forged = `${(late.name ?? '').slice(0, -4)}AAAA`;
    expect(await sdkRefusal(setup.gateway.url, forged, LIVE_MODEL, 'v1alpha')).toMatch(/code 1008.*not valid/);
    // A raw browser-style socket hears the same close after its handshake completes.
    const socket = new WebSocket(`${setup.gateway.url.replace(/^http/, 'ws')}${CONSTRAINED_PATH}?access_token=${encodeURIComponent(expired.name ?? '')}`);
    const closed = await new Promise<{ code: number; reason: string }>((resolve, reject) => {
      socket.once('open', () => socket.send(JSON.stringify({ setup: { model: `models/${LIVE_MODEL}` } })));
      socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() }));
      socket.once('error', reject);
    });
    expect(closed.code).toBe(1008);
    expect(closed.reason).toMatch(/expired/);
  });

  it('ends a session when its token expires', async () => {
    const account = await newAccount(setup);
    const token = await mint(account.key, { expireTime: inSeconds(2), liveConnectConstraints: { model: LIVE_MODEL } });
    const live = await browserLive(token.name ?? '');
    const startedAt = Date.now();
    const closed = await live.closed;
    expect(closed.code).toBe(1000);
    expect(closed.reason).toMatch(/maximum duration/);
    expect(Date.now() - startedAt).toBeLessThan(3000);
  });

  it('refuses bad token requests with Google\'s error object', async () => {
    const account = await newAccount(setup);
    const post = (body: unknown, key = account.key) => fetch(`${setup.gateway.url}/v1alpha/auth_tokens`, { method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const noModel = await post({ uses: 1 });
    expect(noModel.status).toBe(400);
    expect(await noModel.json()).toMatchObject({ error: { status: 'INVALID_ARGUMENT' } });
    expect((await post({ uses: 0, bidiGenerateContentSetup: { model: `models/${LIVE_MODEL}` } })).status).toBe(400);
    expect((await post({ expireTime: inSeconds(-10), bidiGenerateContentSetup: { model: `models/${LIVE_MODEL}` } })).status).toBe(400);
    expect((await post({ bidiGenerateContentSetup: { model: 'models/nope' } })).status).toBe(400);
    expect((await post({ bidiGenerateContentSetup: { model: `models/${LIVE_MODEL}` } }, 'sk-wrong')).status).toBe(401);
    const limited = await newAccount(setup, 20, { allowed_models: ['other-live'] });
    expect((await post({ bidiGenerateContentSetup: { model: `models/${LIVE_MODEL}` } }, limited.key)).status).toBe(403);
  });

  it('opens a Gemini Live session with a client secret of POST /v1/realtime/client_secrets', async () => {
    const account = await newAccount(setup);
    const minted = await fetch(`${setup.gateway.url}/v1/realtime/client_secrets`, { method: 'POST', headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ session: { type: 'realtime', model: LIVE_MODEL } }) });
    const { value } = (await minted.json()) as { value: string };
    expect(value).toMatch(/^ek_/);
    const live = await sdkLive(setup.gateway.url, value, LIVE_MODEL);
    live.session.sendClientContent({ turns: 'Hello', turnComplete: true });
    await live.waitForUsage(1);
    live.session.close();
    await live.closed;
    expect(await usageRows(setup, account)).toHaveLength(1);
    expect(await sdkRefusal(setup.gateway.url, value, 'other-live')).toMatch(/code 1008.*for model 'live-voice' only/);
  });
});
