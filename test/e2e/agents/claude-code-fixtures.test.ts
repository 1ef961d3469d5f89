import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { signThinking } from '../../support/mock-anthropic-upstream.js';
import { loadAgentFixture, readEvents, replayFixture, type AgentFixture } from './agent-fixtures.js';

/** The capture server signed thinking with a stand-in; Anthropic (and its mock) check their own signatures. */
function signedByMock(fixture: AgentFixture): AgentFixture {
  const messages = (fixture.body.messages as Array<{ role: string; content: unknown }>).map((message) => {
    if (!Array.isArray(message.content)) return message;
    const content = message.content.map((block: { type: string; thinking?: string }) => (block.type === 'thinking' ? { ...block, signature: signThinking(block.thinking ?? '') } : block));
    return { ...message, content };
  });
  return { ...fixture, body: { ...fixture.body, messages } };
}

let gateway: TestGateway;
let openai: MockOpenAIUpstream;
let anthropic: MockAnthropicUpstream;
let gemini: MockGeminiUpstream;
let account: SeededAccount;

const ENVIRONMENT = /^# Environment/;

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream()]);
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'gpt-5.1', channel: { name: 'o', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: { 'gpt-5.1': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'team-coder', channel: { name: 'a', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { 'team-coder': 'claude-opus-4-8', 'team-older': 'claude-sonnet-4-5' } } });
  await gateway.admin('POST', '/admin/models', { id: 'team-older', pricing: { input_per_mtok: 1, output_per_mtok: 2 } });
  await addRoutedModel(gateway, { model: 'gemini-coder', channel: { name: 'g', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { 'gemini-coder': 'gemini-2.5-pro' } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

const FIXTURES = ['claude-code-first-turn', 'claude-code-tool-loop', 'claude-code-image-tool-result'] as const;

describe('Claude Code tool loops and images in tool results on other families', () => {
  it('the tool loop reaches OpenAI as tool calls and tool messages, and the answer is Anthropic SSE', async () => {
    const response = await replayFixture(gateway.url, loadAgentFixture('claude-code-tool-loop'), { model: 'gpt-5.1', key: account.key });
    expect(response.status).toBe(200);
    const events = await readEvents(response);
    const text = events.filter((event) => event.event === 'content_block_delta').map((event) => (event.data.delta as { text?: string }).text ?? '').join('');
    expect(text).toContain('hi');
    expect(events.find((event) => event.event === 'message_delta')?.data).toMatchObject({ delta: { stop_reason: 'end_turn' }, usage: { output_tokens: expect.any(Number) as number } });
    const sent = openai.requests.at(-1)?.body as { messages: Array<{ role: string; tool_calls?: Array<{ id: string; function: { name: string } }>; tool_call_id?: string; content: unknown }> };
    const call = sent.messages.find((message) => message.tool_calls !== undefined)?.tool_calls?.[0];
    expect(call?.function.name).toBe('Bash');
    expect(sent.messages.find((message) => message.role === 'tool')).toMatchObject({ tool_call_id: call?.id, content: 'hi' });
  });

  it('an image returned by a tool reaches OpenAI as an image part after the tool messages, and Gemini inline', async () => {
    const fixture = loadAgentFixture('claude-code-image-tool-result');
    expect((await replayFixture(gateway.url, fixture, { model: 'gpt-5.1', key: account.key })).status).toBe(200);
    const toOpenAI = openai.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    const toolIndex = toOpenAI.messages.map((message) => message.role).lastIndexOf('tool');
    expect(JSON.stringify(toOpenAI.messages[toolIndex + 1]?.content)).toContain('data:image/png;base64,iVBORw0KGgo');
    expect((await replayFixture(gateway.url, fixture, { model: 'gemini-coder', key: account.key })).status).toBe(200);
    const toGemini = gemini.requests.at(-1)?.body as { contents: Array<{ parts: Array<{ inlineData?: { mimeType: string }; functionResponse?: { name: string } }> }> };
    const parts = toGemini.contents.flatMap((content) => content.parts);
    expect(parts.some((part) => part.functionResponse?.name === 'Read')).toBe(true);
    expect(parts.some((part) => part.inlineData?.mimeType === 'image/png')).toBe(true);
  });
});

describe('Claude Code requests with a mid-conversation system message', () => {
  it.each(FIXTURES)('%s reaches an OpenAI upstream with the system message in place', async (name) => {
    const fixture = loadAgentFixture(name);
    const response = await replayFixture(gateway.url, fixture, { model: 'gpt-5.1', key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
    const events = await readEvents(response);
    expect(events.at(-1)?.event).toBe('message_stop');
    const sent = openai.requests.at(-1)?.body as { messages: Array<{ role: string; content: unknown }> };
    const roles = sent.messages.map((message) => message.role);
    const positional = roles.indexOf('system', 1);
    expect(positional).toBeGreaterThan(1);
    expect(roles[positional - 1]).toBe('user');
    expect(String(sent.messages[positional]?.content)).toMatch(ENVIRONMENT);
  });

  it.each(FIXTURES)('%s reaches Gemini with the system message joined to systemInstruction', async (name) => {
    const fixture = loadAgentFixture(name);
    const response = await replayFixture(gateway.url, fixture, { model: 'gemini-coder', key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
    expect((await readEvents(response)).at(-1)?.event).toBe('message_stop');
    const sent = gemini.requests.at(-1)?.body as { systemInstruction: { parts: Array<{ text: string }> }; contents: Array<{ role: string }> };
    expect(sent.systemInstruction.parts.some((part) => ENVIRONMENT.test(part.text))).toBe(true);
    expect(sent.contents.every((content) => content.role === 'user' || content.role === 'model')).toBe(true);
  });

  it.each(FIXTURES)('%s passes through untouched to an Anthropic model that takes system messages', async (name) => {
    const fixture = signedByMock(loadAgentFixture(name));
    const response = await replayFixture(gateway.url, fixture, { model: 'team-coder', key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
    expect((await readEvents(response)).at(-1)?.event).toBe('message_stop');
    const sent = anthropic.requests.at(-1);
    expect(sent?.headers['anthropic-beta']).toBe(fixture.headers['anthropic-beta']);
    const body = sent?.body as { messages: Array<{ role: string }>; model: string };
    expect(body.model).toBe('claude-opus-4-8');
    expect(body.messages).toEqual((fixture.body.messages as unknown[]));
  });

  it('an Anthropic model without system messages refuses in Anthropic words, which Claude Code falls back on', async () => {
    const fixture = loadAgentFixture('claude-code-first-turn');
    const response = await replayFixture(gateway.url, fixture, { model: 'team-older', key: account.key });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/role 'system' is not supported/);
  });

  it('the mid-conversation beta header lets any Anthropic model take them', async () => {
    const fixture = loadAgentFixture('claude-code-first-turn');
    const headers = { ...fixture.headers, 'anthropic-beta': `${fixture.headers['anthropic-beta']},mid-conversation-system-2026-04-07` };
    const response = await replayFixture(gateway.url, { ...fixture, headers }, { model: 'team-older', key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
  });

  it('a system message must hold text, refused in Anthropic words', async () => {
    const response = await fetch(`${gateway.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': account.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-5.1', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }, { role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } }] }] }),
    });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error).toMatchObject({ type: 'invalid_request_error' });
    expect(body.error.message).toMatch(/^messages\.1\.content\.0\.type: /);
  });
});
