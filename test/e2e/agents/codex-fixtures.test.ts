import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { loadAgentFixture, readEvents, replayFixture, type AgentFixture } from './agent-fixtures.js';

let gateway: TestGateway;
let openai: MockOpenAIUpstream;
let anthropic: MockAnthropicUpstream;
let gemini: MockGeminiUpstream;
let account: SeededAccount;

/** Every family a Codex model name may be served by: OpenAI's Responses API, chat completions, Anthropic, Gemini. */
const FAMILIES = [
  { family: 'openai-responses', model: 'codex-openai' },
  { family: 'openai-chat', model: 'codex-compatible' },
  { family: 'anthropic', model: 'codex-anthropic' },
  { family: 'gemini', model: 'codex-gemini' },
] as const;

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream()]);
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'codex-openai', channel: { name: 'o', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: { 'codex-openai': 'gpt-5.1' } } });
  await addRoutedModel(gateway, { model: 'codex-compatible', channel: { name: 'c', type: 'openai-compatible', base_url: openai.url, api_key: 'sk-upstream-test', models: { 'codex-compatible': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'codex-anthropic', channel: { name: 'a', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { 'codex-anthropic': 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: 'codex-gemini', channel: { name: 'g', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { 'codex-gemini': 'gemini-2.5-pro' } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
});

/** The fixture with its last user message replaced (the mocks call a tool named in `call <name>`). */
function withUserText(fixture: AgentFixture, text: string): AgentFixture {
  const input = [...(fixture.body.input as Array<Record<string, unknown>>)];
  const last = input.findLastIndex((item) => item.role === 'user');
  input[last] = { type: 'message', role: 'user', content: [{ type: 'input_text', text }] };
  return { ...fixture, body: { ...fixture.body, input } };
}

function sentToolNames(family: string): string[] {
  switch (family) {
    case 'openai-chat':
      return ((openai.requests.at(-1)?.body as { tools: Array<{ function: { name: string } }> }).tools).map((tool) => tool.function.name);
    case 'anthropic':
      return ((anthropic.requests.at(-1)?.body as { tools: Array<{ name: string }> }).tools).map((tool) => tool.name);
    case 'gemini':
      return ((gemini.requests.at(-1)?.body as { tools: Array<{ functionDeclarations?: Array<{ name: string }> }> }).tools).flatMap((tool) => (tool.functionDeclarations ?? []).map((declaration) => declaration.name));
    default:
      return ((openai.requests.at(-1)?.body as { tools: Array<{ name: string; type: string }> }).tools).map((tool) => tool.name);
  }
}

describe('Codex namespace tools on every family', () => {
  it.each(FAMILIES)('a streamed call of a namespaced tool comes back with its namespace ($family)', async ({ family, model }) => {
    const fixture = withUserText(loadAgentFixture('codex-first-turn'), 'call close_agent');
    const response = await replayFixture(gateway.url, fixture, { model, key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
    const events = await readEvents(response);
    const done = events.filter((event) => event.data.type === 'response.output_item.done').map((event) => event.data.item as Record<string, unknown>);
    const call = done.find((item) => item.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', namespace: 'multi_agent_v1', name: 'close_agent' });
    const added = events.find((event) => event.data.type === 'response.output_item.added' && (event.data.item as { type: string }).type === 'function_call');
    expect(added?.data.item).toMatchObject({ namespace: 'multi_agent_v1', name: 'close_agent' });
    const completed = events.at(-1)?.data as { type: string; response: { output: Array<Record<string, unknown>> } };
    expect(completed.type).toBe('response.completed');
    expect(completed.response.output.find((item) => item.type === 'function_call')).toMatchObject({ namespace: 'multi_agent_v1', name: 'close_agent' });
    if (family !== 'openai-responses') {
      const names = sentToolNames(family);
      expect(names).toContain('multi_agent_v1__close_agent');
      expect(names).toContain('exec_command');
      expect(new Set(names).size).toBe(names.length);
    }
  });

  it.each(FAMILIES)('a non-streamed answer names the namespace too ($family)', async ({ model }) => {
    const fixture = withUserText(loadAgentFixture('codex-first-turn'), 'call close_agent');
    const response = await replayFixture(gateway.url, { ...fixture, body: { ...fixture.body, stream: false } }, { model, key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
    const body = (await response.json()) as { output: Array<Record<string, unknown>> };
    expect(body.output.find((item) => item.type === 'function_call')).toMatchObject({ namespace: 'multi_agent_v1', name: 'close_agent' });
  });

  it.each(['codex-tool-loop', 'codex-namespace-tool-loop'].flatMap((name) => FAMILIES.map((family) => ({ ...family, name }))))('$name goes through as recorded, default tools included ($family)', async ({ model, name }) => {
    const response = await replayFixture(gateway.url, loadAgentFixture(name), { model, key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
    const events = await readEvents(response);
    expect(events.at(-1)?.data.type).toBe('response.completed');
    const done = events.filter((event) => event.data.type === 'response.output_item.done');
    expect(done.length).toBeGreaterThan(0);
  });

  it.each(FAMILIES)('the tool loop with a namespaced call and its output goes through ($family)', async ({ family, model }) => {
    const fixture = loadAgentFixture('codex-namespace-tool-loop');
    const response = await replayFixture(gateway.url, fixture, { model, key: account.key });
    expect(response.status, await response.clone().text()).toBe(200);
    const events = await readEvents(response);
    expect(events.at(-1)?.data.type).toBe('response.completed');
    if (family === 'anthropic') {
      const body = anthropic.requests.at(-1)?.body as { messages: Array<{ role: string; content: Array<{ type: string; name?: string }> }> };
      const uses = body.messages.flatMap((message) => (Array.isArray(message.content) ? message.content : [])).filter((block) => block.type === 'tool_use');
      expect(uses.map((block) => block.name)).toEqual(['multi_agent_v1__close_agent']);
    }
    if (family === 'gemini') {
      const body = gemini.requests.at(-1)?.body as { contents: Array<{ parts: Array<{ functionCall?: { name: string }; functionResponse?: { name: string } }> }> };
      const parts = body.contents.flatMap((content) => content.parts);
      expect(parts.find((part) => part.functionCall !== undefined)?.functionCall?.name).toBe('multi_agent_v1__close_agent');
      expect(parts.find((part) => part.functionResponse !== undefined)?.functionResponse?.name).toBe('multi_agent_v1__close_agent');
    }
  });
});
