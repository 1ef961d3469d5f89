/**
 * The Responses API's WebSocket mode at `wss://<gateway>/v1/responses`, with the `openai` SDK's own client
 * (`ResponsesWS`): several `response.create` events on one connection, each streamed back as the Responses events and
 * billed exactly as the same streamed `POST /v1/responses` is, on OpenAI and translated to Anthropic and Gemini;
 * `stream_id` lanes; refusals as `error` events with the HTTP status (a model outside the allowlist, no money, a key
 * revoked while connected, unknown events, `background`); a wrong key refused at the handshake.
 */
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { usageRows, type UsageRow } from './realtime-support.js';

let gateway: TestGateway;
let openaiUpstream: MockOpenAIUpstream;
let anthropicUpstream: MockAnthropicUpstream;
let geminiUpstream: MockGeminiUpstream;

beforeAll(async () => {
  [openaiUpstream, anthropicUpstream, geminiUpstream] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream()]);
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'v-openai', channel: { name: 'o', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'v-openai': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'v-anthropic', channel: { name: 'a', type: 'anthropic', base_url: anthropicUpstream.url, api_key: 'sk-ant-upstream-test', models: { 'v-anthropic': 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: 'v-gemini', channel: { name: 'g', type: 'gemini', base_url: geminiUpstream.url, api_key: 'gemini-upstream-test', models: { 'v-gemini': 'gemini-2.5-flash' } } });
  await gateway.gateway.services.catalog.reload();
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openaiUpstream?.close(), anthropicUpstream?.close(), geminiUpstream?.close()]);
});

type ServerEvent = Record<string, unknown> & { type: string };

/** The SDK's WebSocket client on the gateway, recording every event. */
function connect(key: string, baseURL = gateway.baseURL): { ws: ResponsesWS; events: ServerEvent[]; until(check: (events: ServerEvent[]) => boolean, timeoutMs?: number): Promise<void> } {
  const client = new OpenAI({ apiKey: key, baseURL, maxRetries: 0 });
  const ws = new ResponsesWS(client);
  const events: ServerEvent[] = [];
  ws.on('event', (event) => events.push(event as unknown as ServerEvent));
  ws.on('error', () => undefined);
  return {
    ws,
    events,
    async until(check, timeoutMs = 10_000) {
      for (let waited = 0; !check(events); waited += 20) {
        if (waited > timeoutMs) throw new Error(`timed out (got ${events.map((event) => event.type).join(', ')})`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
  };
}

/** The HTTP answer refusing a WebSocket handshake to /v1/responses with `key`. */
function handshakeRefusal(key: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`${gateway.baseURL.replace(/^http/, 'ws')}/responses`, { headers: { authorization: `Bearer ${key}` } });
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(body) as unknown }));
    });
    socket.once('open', () => reject(new Error('opened')));
    socket.once('error', () => undefined);
  });
}

const count = (events: ServerEvent[], type: string): number => events.filter((event) => event.type === type).length;
const sorted = (rows: UsageRow[]): UsageRow[] => [...rows].sort((left, right) => left.request_id.localeCompare(right.request_id));

describe('the mock OpenAI upstream\'s WebSocket mode', () => {
  it('speaks it as the SDK expects when the SDK connects to it directly, and the gateway sends the same events', async () => {
    const direct = connect('sk-upstream-test', openaiUpstream.url);
    direct.ws.send({ type: 'response.create', model: 'gpt-4o-mini', input: 'Say hello', stream_id: 'x' } as never);
    await direct.until((events) => count(events, 'response.completed') === 1);
    direct.ws.send({ type: 'response.create', model: 'gpt-4o-mini', input: 'Say hello', background: true });
    await direct.until((events) => count(events, 'error') === 1);
    direct.ws.close();
    const answer = direct.events.filter((event) => event.stream_id === 'x');
    expect(answer.map((event) => event.type)).toEqual(expect.arrayContaining(['response.created', 'response.output_text.delta', 'response.completed']));
    expect(direct.events.at(-1)).toMatchObject({ type: 'error', status: 400, error: { param: 'background' } });
    // Through the gateway (an OpenAI channel), the same request yields the same event sequence.
    const account = await seedAccount(gateway, { balanceUsd: 20 });
    const through = connect(account.key);
    through.ws.send({ type: 'response.create', model: 'v-openai', input: 'Say hello', stream_id: 'x' } as never);
    await through.until((events) => count(events, 'response.completed') === 1);
    through.ws.close();
    expect(through.events.map((event) => event.type)).toEqual(answer.map((event) => event.type));
    expect(through.events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta)).toEqual(answer.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta));
  });
});

describe('Responses API WebSocket mode', () => {
  it.each(['v-openai', 'v-anthropic', 'v-gemini'])('streams three responses on one connection through %s, each billed as the same streamed POST /v1/responses', async (model) => {
    const account = await seedAccount(gateway, { balanceUsd: 20 });
    const prompts = ['Say hello', 'Stream a few words please', 'One more answer'];
    // The same three as streamed HTTP calls, on an account of their own: what each costs.
    const reference = await seedAccount(gateway, { balanceUsd: 20 });
    const http = new OpenAI({ apiKey: reference.key, baseURL: gateway.baseURL, maxRetries: 0 });
    const httpTexts: string[] = [];
    for (const input of prompts) {
      let text = '';
      for await (const event of await http.responses.create({ model, input, stream: true })) if (event.type === 'response.output_text.delta') text += event.delta;
      httpTexts.push(text);
    }
    const socket = connect(account.key);
    for (const [index, input] of prompts.entries()) {
      socket.ws.send({ type: 'response.create', model, input });
      await socket.until((events) => count(events, 'response.completed') === index + 1);
    }
    socket.ws.close();
    const texts: string[] = [];
    let current = '';
    for (const event of socket.events) {
      if (event.type === 'response.output_text.delta') current += String(event.delta);
      if (event.type === 'response.completed') {
        texts.push(current);
        current = '';
      }
    }
    expect(texts).toEqual(httpTexts);
    expect(texts.every((text) => text.length > 0)).toBe(true);
    expect(count(socket.events, 'response.created')).toBe(3);
    const completed = socket.events.filter((event) => event.type === 'response.completed').map((event) => event.response as { usage: { output_tokens: number }; status: string });
    expect(completed.every((response) => response.status === 'completed' && response.usage.output_tokens > 0)).toBe(true);
    const rows = sorted(await usageRows({ gateway }, account));
    const referenceRows = sorted(await usageRows({ gateway }, reference));
    expect(rows).toHaveLength(3);
    expect(rows.map((row) => [row.endpoint, row.status, row.model, row.prompt_tokens, row.completion_tokens, row.cost_usd])).toEqual(referenceRows.map((row) => [row.endpoint, row.status, row.model, row.prompt_tokens, row.completion_tokens, row.cost_usd]));
    expect(rows.every((row) => row.cost_usd > 0 && row.endpoint === '/v1/responses')).toBe(true);
    await flushWrites(gateway);
    const balance = async (id: string): Promise<bigint> => (await gateway.gateway.services.storage.accounts.getById(id))?.balanceNano ?? -1n;
    expect(await balance(account.accountId)).toBe(await balance(reference.accountId));
  });

  it('tags each lane\'s events with its stream_id and runs lanes side by side', async () => {
    const account = await seedAccount(gateway, { balanceUsd: 20 });
    const socket = connect(account.key);
    socket.ws.send({ type: 'response.create', model: 'v-openai', input: 'Lane A says hello', stream_id: 'a' } as never);
    socket.ws.send({ type: 'response.create', model: 'v-anthropic', input: 'Lane B says hello', stream_id: 'b' } as never);
    await socket.until((events) => count(events, 'response.completed') === 2);
    socket.ws.close();
    for (const lane of ['a', 'b']) {
      const events = socket.events.filter((event) => event.stream_id === lane);
      expect(events.map((event) => event.type)).toContain('response.completed');
      expect(events.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta).join('')).toContain(`Lane ${lane.toUpperCase()} says hello`);
    }
    expect(socket.events.every((event) => event.stream_id === 'a' || event.stream_id === 'b')).toBe(true);
  });

  it('answers refusals as error events with the HTTP status, and the connection stays usable', async () => {
    const limited = await seedAccount(gateway, { balanceUsd: 20, key: { allowed_models: ['v-openai'] } });
    const socket = connect(limited.key);
    socket.ws.send({ type: 'response.create', model: 'v-anthropic', input: 'Hello' });
    await socket.until((events) => count(events, 'error') === 1);
    expect(socket.events.at(-1)).toMatchObject({ type: 'error', status: 403, error: { code: 'model_not_allowed' } });
    socket.ws.send({ type: 'response.create', model: 'v-openai', input: 'Hello', background: true });
    await socket.until((events) => count(events, 'error') === 2);
    expect(socket.events.at(-1)).toMatchObject({ type: 'error', status: 400, error: { param: 'background' } });
    socket.ws.sendRaw(JSON.stringify({ type: 'response.bogus' }));
    await socket.until((events) => count(events, 'error') === 3);
    expect(socket.events.at(-1)).toMatchObject({ type: 'error', status: 400, error: { code: 'invalid_event' } });
    socket.ws.send({ type: 'response.create', model: 'v-openai', input: 'Still here' });
    await socket.until((events) => count(events, 'response.completed') === 1);
    // The key is checked for every response: revoked while connected, the next one is refused.
    expect((await gateway.admin('PATCH', `/admin/keys/${limited.keyId}`, { status: 'revoked' })).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    socket.ws.send({ type: 'response.create', model: 'v-openai', input: 'After revocation' });
    await socket.until((events) => count(events, 'error') === 4);
    expect(socket.events.at(-1)).toMatchObject({ type: 'error', status: 401, error: { code: 'revoked_api_key' } });
    socket.ws.close();
    expect(await usageRows({ gateway }, limited)).toHaveLength(2);
  });

  it('refuses at the handshake a caller who can pay for nothing, and a response the balance cannot cover with a 402 error event', async () => {
    const empty = await seedAccount(gateway, { balanceUsd: 0 });
    expect(await handshakeRefusal(empty.key)).toMatchObject({ status: 402, body: { error: { code: 'insufficient_balance' } } });
    // A ten-thousandth of a dollar pays for something, not for the output a response may write (its hold).
    const poor = await seedAccount(gateway, { balanceUsd: 0.0001 });
    const socket = connect(poor.key);
    socket.ws.send({ type: 'response.create', model: 'v-openai', input: 'Hello' });
    await socket.until((events) => count(events, 'error') === 1);
    expect(socket.events.at(-1)).toMatchObject({ type: 'error', status: 402, error: { code: 'insufficient_balance' } });
    socket.ws.close();
  });

  it('refuses a wrong key at the handshake with the spec\'s error object', async () => {
    expect(await handshakeRefusal('sk-wrong')).toMatchObject({ status: 401, body: { error: { code: 'invalid_api_key' } } });
  });
});
