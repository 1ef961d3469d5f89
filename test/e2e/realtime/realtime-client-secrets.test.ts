/**
 * POST /v1/realtime/client_secrets with the `openai` SDK, and a browser-style WebSocket opening a session with the
 * ephemeral secret: scoped to its model, carrying its session configuration upstream, billed to the key that made it,
 * refused when forged or when that key is disabled.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL, newAccount, openRaw, startRealtimeSetup, usageRows, type RealtimeSetup } from './realtime-support.js';

let setup: RealtimeSetup;

beforeAll(async () => {
  setup = await startRealtimeSetup();
});

afterAll(async () => {
  await setup?.close();
});

const browser = (secret: string) => ({ protocols: ['realtime', `openai-insecure-api-key.${secret}`], headers: { origin: 'https://app.example.com' } });
const refusal = (url: string, options: Parameters<typeof openRaw>[1]) => openRaw(url, options).then(() => null, (error: { status: number; body: { error: { code: string } } }) => [error.status, error.body.error.code]);

describe('POST /v1/realtime/client_secrets', () => {
  it('mints a short-lived secret a browser opens its session with; the session configuration goes upstream first', async () => {
    const account = await newAccount(setup);
    const client = new OpenAI({ apiKey: account.key, baseURL: setup.gateway.baseURL });
    const before = Math.floor(Date.now() / 1000);
    const secret = await client.realtime.clientSecrets.create({ session: { type: 'realtime', model: MODEL, instructions: 'Answer in one sentence.' }, expires_after: { anchor: 'created_at', seconds: 60 } });
    expect(secret.value).toMatch(/^ek_/);
    expect(secret.expires_at).toBeGreaterThanOrEqual(before + 59);
    expect(secret.expires_at).toBeLessThanOrEqual(before + 61);
    expect(secret.session).toMatchObject({ type: 'realtime', model: MODEL, instructions: 'Answer in one sentence.' });
    const session = await openRaw(setup.url, browser(secret.value));
    expect(session.socket.protocol).toBe('realtime');
    await session.next('session.created');
    const updated = await session.next('session.updated');
    expect(updated).toMatchObject({ session: { instructions: 'Answer in one sentence.' } });
    expect(setup.upstream.connections.at(-1)?.received[0]).toBe('session.update');
    session.send({ type: 'response.create' });
    await session.next('response.done');
    session.socket.close();
    await session.closed;
    // A secret opens one session: the one whose id it names.
    expect(await refusal(setup.url, browser(secret.value))).toEqual([401, 'expired_api_key']);
    // Billed to the key that minted the secret.
    const rows = await usageRows(setup, account);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.cost_usd).toBeGreaterThan(0);
  });

  it('refuses another model, a forged secret, and a secret whose key was disabled', async () => {
    const account = await newAccount(setup);
    const client = new OpenAI({ apiKey: account.key, baseURL: setup.gateway.baseURL, maxRetries: 0 });
    const { value } = await client.realtime.clientSecrets.create({ session: { type: 'realtime', model: MODEL } });
    expect(await refusal(setup.url.replace(`model=${MODEL}`, 'model=other'), browser(value))).toEqual([403, 'model_not_allowed']);
    const [payload, signature] = value.slice(3).split('.');
    const forged = `ek_${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()), k: 'key_someone_else' })).toString('base64url')}.${signature}`;
    expect(await refusal(setup.url, browser(forged))).toEqual([401, 'invalid_api_key']);
    const disabled = await setup.gateway.admin('PATCH', `/admin/keys/${account.keyId}`, { status: 'disabled' });
    expect(disabled.status).toBe(200);
    expect(await refusal(setup.url, browser(value))).toEqual([403, 'key_disabled']);
  });

  it('is no API key anywhere but a session: the other endpoints refuse it, and it mints no secret or token of its own', async () => {
    const account = await newAccount(setup);
    const client = new OpenAI({ apiKey: account.key, baseURL: setup.gateway.baseURL, maxRetries: 0 });
    const { value } = await client.realtime.clientSecrets.create({ session: { type: 'realtime', model: MODEL } });
    const post = (path: string, headers: Record<string, string>, body: unknown) => fetch(`${setup.gateway.baseURL.replace(/\/v1$/, '')}${path}`, {
      method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
    });
    const chat = await post('/v1/chat/completions', { authorization: `Bearer ${value}` }, { model: MODEL, messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(401);
    const again = await post('/v1/realtime/client_secrets', { authorization: `Bearer ${value}` }, { session: { type: 'realtime', model: MODEL } });
    expect(again.status).toBe(401);
    const token = await post('/v1alpha/auth_tokens', { 'x-goog-api-key': value }, { uses: 1, bidiGenerateContentSetup: { model: MODEL } });
    expect(token.status).toBe(401);
    expect(await usageRows(setup, account)).toHaveLength(0);
  });

  it('validates the request: a session with a model the key may use, and OpenAI\'s bounds of expires_after', async () => {
    const account = await newAccount(setup, 20, { allowed_models: ['other-model'] });
    const client = new OpenAI({ apiKey: account.key, baseURL: setup.gateway.baseURL, maxRetries: 0 });
    const status = (body: Record<string, unknown>) => client.realtime.clientSecrets.create(body as never).then(() => 200, (error: { status: number }) => error.status);
    expect(await status({ session: { type: 'realtime', model: MODEL } })).toBe(403);
    expect(await status({})).toBe(400);
    const other = await newAccount(setup);
    const allowed = new OpenAI({ apiKey: other.key, baseURL: setup.gateway.baseURL, maxRetries: 0 });
    expect(await allowed.realtime.clientSecrets.create({ session: { type: 'realtime', model: MODEL }, expires_after: { anchor: 'created_at', seconds: 5 } }).then(() => 200, (error: { status: number }) => error.status)).toBe(400);
    expect(await allowed.realtime.clientSecrets.create({ session: { type: 'realtime', model: 'nope' } }).then(() => 200, (error: { status: number }) => error.status)).toBe(400);
  });
});
