import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

/**
 * A moderation policy's `timeout_ms` over real HTTP with the official OpenAI SDK: the moderation model's upstream takes
 * the request and never answers while the test runs, so the check has no verdict once `timeout_ms` has passed. A policy
 * that fails open passes the text (`unavailable`), one that fails closed refuses it with `guardrail_blocked` before the
 * chat upstream sees it; either way the abandoned moderation call is given up (its upstream connection closed), not
 * left running. Runs on PostgreSQL when TEST_DATABASE_URL names one.
 */
let gateway: TestGateway;
let chatUpstream: MockOpenAIUpstream;
let account: SeededAccount;
const keys: Record<string, string> = {};

/** An OpenAI-wire moderation upstream that reads each request and never answers it; it notes when the caller hangs up. */
let slow: Server;
const held: { request: IncomingMessage; closed: boolean }[] = [];

const TIMEOUT_MS = 200;

beforeAll(async () => {
  slow = createServer((request) => {
    const entry = { request, closed: false };
    held.push(entry);
    request.resume();
    request.socket.on('close', () => {
      entry.closed = true;
    });
  });
  await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
  const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/v1`;
  chatUpstream = await startMockOpenAIUpstream();
  gateway = await startTestGateway();
  for (const model of [
    { id: 'chat-openai', pricing: { input_per_mtok: 1, output_per_mtok: 2 } },
    { id: 'slow-moderation', kind: 'moderation', pricing: { per_request: 0.001 } },
  ]) {
    expect((await gateway.admin('POST', '/admin/models', model)).status).toBe(201);
  }
  expect((await gateway.admin('POST', '/admin/channels', { name: 'chat', type: 'openai', base_url: chatUpstream.url, api_key: 'sk-upstream-test', models: { 'chat-openai': 'gpt-4o-mini' } })).status).toBe(201);
  expect((await gateway.admin('POST', '/admin/channels', { name: 'slow', type: 'openai', base_url: slowUrl, api_key: 'sk-upstream-test', models: { 'slow-moderation': 'omni-moderation-latest' } })).status).toBe(201);
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
  const policies = [
    { name: 'slow-open', kind: 'moderation', mode: 'block', applies_to: 'input', settings: { model: 'slow-moderation', timeout_ms: TIMEOUT_MS, fail_open: true } },
    { name: 'slow-closed', kind: 'moderation', mode: 'block', applies_to: 'input', settings: { model: 'slow-moderation', timeout_ms: TIMEOUT_MS } },
    { name: 'slow-closed-log', kind: 'moderation', mode: 'log', applies_to: 'input', settings: { model: 'slow-moderation', timeout_ms: TIMEOUT_MS, fail_open: false } },
  ];
  for (const policy of policies) {
    const created = await gateway.admin('POST', '/admin/guardrails', policy);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const key = await gateway.admin<{ key: string }>('POST', `/admin/accounts/${account.accountId}/keys`, { name: policy.name, guardrails: [policy.name] });
    expect(key.status).toBe(201);
    keys[policy.name] = key.body.key;
  }
});

afterAll(async () => {
  await gateway?.close();
  await chatUpstream?.close();
  slow?.closeAllConnections();
  await new Promise<void>((resolve) => (slow === undefined ? resolve() : slow.close(() => resolve())));
});

const ask = (policy: string, content: string) => new OpenAI({ baseURL: gateway.baseURL, apiKey: keys[policy] ?? '', maxRetries: 0 }).chat.completions.create({ model: 'chat-openai', messages: [{ role: 'user', content }] }).withResponse();

const chatCalls = (): number => chatUpstream.requests.filter((request) => request.path === '/v1/chat/completions').length;

/** Waits (bounded) until every moderation call the slow upstream took has been hung up by the gateway. */
async function allHungUp(): Promise<boolean> {
  for (let attempt = 0; attempt < 200 && held.some((entry) => !entry.closed); attempt++) await new Promise((resolve) => setTimeout(resolve, 25));
  return held.every((entry) => entry.closed);
}

describe('a moderation policy whose upstream answers slower than timeout_ms', () => {
  it('fails open: the text passes to the chat upstream, the summary says unavailable, and the moderation call is given up', async () => {
    const before = held.length;
    const chats = chatCalls();
    const open = await ask('slow-open', 'a question the moderation model never answers');
    expect(held.length).toBe(before + 1);
    expect(open.data.choices[0]?.message.content).toContain('moderation model never answers');
    expect(open.response.headers.get('x-gateway-guardrails')).toBe('slow-open/input=unavailable;1');
    expect(chatCalls()).toBe(chats + 1);
    expect(await allHungUp()).toBe(true);
  });

  it('fails closed: refused with guardrail_blocked before the chat upstream sees it, and the moderation call is given up', async () => {
    const before = held.length;
    const chats = chatCalls();
    const closed = await ask('slow-closed', 'another question').catch((caught: unknown) => caught);
    expect(closed).toBeInstanceOf(OpenAI.BadRequestError);
    const failure = closed as InstanceType<typeof OpenAI.BadRequestError>;
    expect(failure.code).toBe('guardrail_blocked');
    expect(failure.message).toContain("'slow-closed'");
    expect(failure.headers.get('x-gateway-guardrails')).toBe('slow-closed/input=blocked;1');
    expect(held.length).toBe(before + 1);
    expect(chatCalls()).toBe(chats);
    expect(await allHungUp()).toBe(true);

    // The refused request's usage row names the policy; no text is kept.
    await flushWrites(gateway);
    const rows = (await gateway.admin<{ data: { endpoint: string; error_code: string | null; guardrails: unknown }[] }>('GET', `/admin/usage?account_id=${account.accountId}&limit=200`)).body.data;
    const refused = rows.find((row) => row.endpoint === '/v1/chat/completions' && row.error_code === 'guardrail_blocked');
    expect(refused?.guardrails).toEqual([{ name: 'slow-closed', direction: 'input', outcome: 'blocked', count: 1 }]);
    expect(JSON.stringify(rows)).not.toContain('another question');
  });

  it('a logging policy that fails closed logs the missing verdict and lets the text through', async () => {
    const chats = chatCalls();
    const logged = await ask('slow-closed-log', 'a third question');
    expect(logged.response.headers.get('x-gateway-guardrails')).toBe('slow-closed-log/input=logged;1');
    expect(chatCalls()).toBe(chats + 1);
    expect(await allHungUp()).toBe(true);
  });
});
