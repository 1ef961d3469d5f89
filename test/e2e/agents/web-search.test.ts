import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { loadAgentFixture, readEvents, replayFixture, type AgentFixture } from './agent-fixtures.js';

let gateway: TestGateway;
let openai: MockOpenAIUpstream;
let anthropic: MockAnthropicUpstream;
let gemini: MockGeminiUpstream;
let account: SeededAccount;

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream()]);
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'search-openai', channel: { name: 'o', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: { 'search-openai': 'gpt-5.1' } } });
  await addRoutedModel(gateway, { model: 'search-compatible', channel: { name: 'c', type: 'openai-compatible', base_url: openai.url, api_key: 'sk-upstream-test', models: { 'search-compatible': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, {
    model: 'search-anthropic',
    channel: { name: 'a', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { 'search-anthropic': 'claude-sonnet-4-5', 'search-anthropic-off': 'claude-sonnet-4-5' }, settings: { hosted_tools: { 'search-anthropic-off': false } } },
  });
  await gateway.admin('POST', '/admin/models', { id: 'search-anthropic-off', pricing: { input_per_mtok: 1, output_per_mtok: 2 } });
  await addRoutedModel(gateway, { model: 'search-gemini-3', channel: { name: 'g3', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { 'search-gemini-3': 'gemini-3-pro-preview' } } });
  await addRoutedModel(gateway, { model: 'search-gemini-2', channel: { name: 'g2', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { 'search-gemini-2': 'gemini-2.5-pro' } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

/** Codex's first turn (its default web_search tool included) asking for a search. */
function searchTurn(stream = true): AgentFixture {
  const fixture = loadAgentFixture('codex-first-turn');
  const input = [...(fixture.body.input as Array<Record<string, unknown>>)];
  input[input.length - 1] = { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'search the web for the unigate release notes' }] };
  return { ...fixture, body: { ...fixture.body, input, stream } };
}

interface Output {
  type: string;
  action?: { type: string; query?: string };
  content?: Array<{ type: string; text: string; annotations: Array<{ type: string; url: string; start_index: number; end_index: number; title: string }> }>;
}

async function completedOutput(response: Response): Promise<{ output: Output[]; events: Array<{ data: Record<string, unknown> }> }> {
  const events = await readEvents(response);
  const completed = events.at(-1)?.data as { type: string; response: { output: Output[] } };
  expect(completed.type).toBe('response.completed');
  return { output: completed.response.output, events };
}

function expectSearchAndCitation(output: Output[], url: RegExp): void {
  const search = output.find((item) => item.type === 'web_search_call');
  expect(search?.action).toMatchObject({ type: 'search', query: expect.stringContaining('unigate release notes') as string });
  const message = output.find((item) => item.type === 'message');
  const text = message?.content?.[0];
  expect(text?.annotations.length).toBeGreaterThan(0);
  const annotation = text?.annotations[0];
  expect(annotation).toMatchObject({ type: 'url_citation' });
  expect(annotation?.url).toMatch(url);
  expect(annotation?.end_index).toBeGreaterThan(annotation?.start_index ?? 0);
  expect(annotation?.end_index).toBeLessThanOrEqual(text?.text.length ?? 0);
}

describe("Codex's default web_search on every family", () => {
  it('maps to Anthropic\'s server-side web search, results and citations back as Responses items (streamed)', async () => {
    const response = await replayFixture(gateway.url, searchTurn(), { model: 'search-anthropic', key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('x-gateway-dropped-tools')).toBeNull();
    const { output, events } = await completedOutput(response);
    const sent = anthropic.requests.at(-1)?.body as { tools: Array<{ type?: string; name: string }> };
    expect(sent.tools).toContainEqual({ type: 'web_search_20250305', name: 'web_search' });
    expectSearchAndCitation(output, /^https:\/\/example\.com\//);
    const types = events.map((event) => event.data.type);
    expect(types).toContain('response.web_search_call.completed');
    expect(types).toContain('response.output_text.annotation.added');
  });

  it('maps to Anthropic on an unstreamed request too', async () => {
    const response = await replayFixture(gateway.url, searchTurn(false), { model: 'search-anthropic', key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
    const body = (await response.json()) as { output: Output[] };
    expectSearchAndCitation(body.output, /^https:\/\/example\.com\//);
  });

  it.each([true, false])('maps to Google Search grounding on Gemini 3, with function tools alongside (stream %s)', async (stream) => {
    const response = await replayFixture(gateway.url, searchTurn(stream), { model: 'search-gemini-3', key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
    const sent = gemini.requests.at(-1)?.body as { tools: Array<Record<string, unknown>> };
    expect(sent.tools).toContainEqual({ googleSearch: {} });
    expect(sent.tools.some((tool) => Array.isArray(tool.functionDeclarations))).toBe(true);
    const output = stream ? (await completedOutput(response)).output : ((await response.json()) as { output: Output[] }).output;
    expectSearchAndCitation(output, /^https:\/\/vertexaisearch\.cloud\.google\.com\//);
  });

  it('passes through to OpenAI\'s own Responses API', async () => {
    const response = await replayFixture(gateway.url, searchTurn(), { model: 'search-openai', key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
    const { output } = await completedOutput(response);
    expectSearchAndCitation(output, /^https:\/\/example\.com\//);
    expect((openai.requests.at(-1)?.body as { tools: Array<{ type: string }> }).tools).toContainEqual({ type: 'web_search', external_web_access: false });
  });

  it.each([
    { model: 'search-gemini-2', upstream: () => gemini.requests.at(-1)?.body as { tools: Array<Record<string, unknown>> }, reason: /Gemini 3/ },
    { model: 'search-compatible', upstream: () => openai.requests.at(-1)?.body as { tools: Array<Record<string, unknown>> }, reason: /chat completions/ },
    { model: 'search-anthropic-off', upstream: () => anthropic.requests.at(-1)?.body as { tools: Array<Record<string, unknown>> }, reason: /operator/ },
  ])('is dropped where no equivalent exists or the operator said so, in a header and the usage row ($model)', async ({ model, upstream, reason }) => {
    const response = await replayFixture(gateway.url, searchTurn(), { model, key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('x-gateway-dropped-tools')).toBe('web_search');
    expect(decodeURIComponent(response.headers.get('x-gateway-warnings') ?? '')).toMatch(reason);
    const { output } = await completedOutput(response);
    expect(output.some((item) => item.type === 'web_search_call')).toBe(false);
    const tools = upstream().tools;
    expect(JSON.stringify(tools)).not.toMatch(/googleSearch|web_search/);
    await flushWrites(gateway);
    const usage = await gateway.admin<{ data: Array<{ model: string; status: number; error_code: string | null }> }>('GET', `/admin/usage?key_id=${account.keyId}&limit=5`);
    expect(usage.body.data[0]).toMatchObject({ model, status: 200, error_code: 'hosted_tool_dropped' });
  });

  it('other hosted tools are left out the same way rather than refused', async () => {
    const fixture = searchTurn(false);
    const tools = [...(fixture.body.tools as unknown[]), { type: 'code_interpreter', container: { type: 'auto' } }];
    const response = await replayFixture(gateway.url, { ...fixture, body: { ...fixture.body, tools } }, { model: 'search-anthropic', key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
    expect(response.headers.get('x-gateway-dropped-tools')).toBe('code_interpreter');
  });
});

describe("Claude Code's WebSearch (Anthropic's server tool) on other families", () => {
  it.each([false, true])('maps to Google Search on Gemini, with server_tool_use, results and citations back (stream %s)', async (stream) => {
    const client = new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0 });
    const request = {
      model: 'search-gemini-3',
      max_tokens: 500,
      tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 8 }],
      messages: [{ role: 'user' as const, content: 'Perform a web search for the query: unigate release notes' }],
    };
    const message = stream ? await client.messages.stream(request).finalMessage() : await client.messages.create(request);
    expect((gemini.requests.at(-1)?.body as { tools: unknown[] }).tools).toEqual([{ googleSearch: {} }]);
    const use = message.content.find((block) => block.type === 'server_tool_use');
    expect(use).toMatchObject({ type: 'server_tool_use', name: 'web_search', input: { query: expect.stringContaining('unigate release notes') as string } });
    const result = message.content.find((block) => block.type === 'web_search_tool_result');
    expect(result).toMatchObject({ type: 'web_search_tool_result', tool_use_id: (use as { id: string }).id });
    const results = (result as { content: Array<{ url: string }> }).content;
    expect(results.map((entry) => entry.url)).toEqual(expect.arrayContaining([expect.stringMatching(/^https:\/\/vertexaisearch/)]));
    const text = message.content.find((block) => block.type === 'text') as Anthropic.TextBlock;
    expect(text.citations?.[0]).toMatchObject({ type: 'web_search_result_location', url: expect.stringMatching(/^https:\/\/vertexaisearch/) as string });
  });
});

describe('chat completions web_search_options on other families', () => {
  it('maps to Anthropic web search, citations back as url_citation annotations', async () => {
    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
    const completion = await client.chat.completions.create({ model: 'search-anthropic', web_search_options: {}, messages: [{ role: 'user', content: 'search the web for the unigate release notes' }] });
    expect((anthropic.requests.at(-1)?.body as { tools: unknown[] }).tools).toEqual([{ type: 'web_search_20250305', name: 'web_search' }]);
    const message = completion.choices[0]!.message;
    expect(message.annotations?.[0]).toMatchObject({ type: 'url_citation', url_citation: { url: 'https://example.com/unigate-release', start_index: 0, end_index: message.content!.length } });
  });
});
