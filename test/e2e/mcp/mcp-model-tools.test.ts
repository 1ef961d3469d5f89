/**
 * MCP tools offered to any model, over real HTTP on the suite's database: the Responses API's `mcp` tool with the
 * official openai SDK and Anthropic's MCP connector (`mcp_servers`) with the official @anthropic-ai/sdk, on Claude,
 * Gemini and OpenAI models reached by translation and pass-through (mock upstreams speaking their vendors' wires), against a
 * real MCP server built with the MCP SDK. The gateway lists the registered server's tools to the model, runs the
 * calls the model makes and answers with the items each family defines; every model round is billed once, through
 * its own usage row; a URL that is no registered server's, or a server the key may not use, is refused.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ResponseInputItem, ResponseOutputItem, ResponseStreamEvent, Tool } from 'openai/resources/responses/responses';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, suiteDatabase, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockMcpServer, type MockMcpServer } from '../../support/mock-mcp-server.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

interface UsageRow {
  request_id: string;
  model: string;
  endpoint: string;
  status: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
}

const ALPHA_SECRET = 'Bearer alpha-model-side-secret-91d2';
const MODELS = ['r-anthropic', 'r-gemini', 'r-openai'] as const;
const PROMPT = 'Please call alpha__echo with {"text":"hello from the model"} in Paris.';

let gateway: TestGateway;
let alpha: MockMcpServer;
let beta: MockMcpServer;
let anthropicUpstream: MockAnthropicUpstream;
let geminiUpstream: MockGeminiUpstream;
let openaiUpstream: MockOpenAIUpstream;
let account: SeededAccount;
let denied: SeededAccount;
let openai: OpenAI;

beforeAll(async () => {
  [alpha, beta, anthropicUpstream, geminiUpstream, openaiUpstream] = await Promise.all([
    startMockMcpServer('alpha', 'streamable-http'), startMockMcpServer('beta', 'streamable-http'), startMockAnthropicUpstream(), startMockGeminiUpstream(), startMockOpenAIUpstream(),
  ]);
  // Health checks off: a test counts every request a server receives, and a check would be one.
  gateway = await startTestGateway({ env: { MCP_ALLOW_PRIVATE_ADDRESSES: 'true', MCP_HEALTH_CHECK_INTERVAL_SECONDS: '0' } });
  expect((await gateway.admin('POST', '/admin/mcp-servers', { name: 'alpha', url: alpha.url, headers: { Authorization: ALPHA_SECRET } })).status).toBe(201);
  expect((await gateway.admin('POST', '/admin/mcp-servers', { name: 'beta', url: beta.url })).status).toBe(201);
  await addRoutedModel(gateway, { model: 'r-anthropic', channel: { name: 'a', type: 'anthropic', base_url: anthropicUpstream.url, api_key: 'sk-ant-upstream-test', models: { 'r-anthropic': 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: 'r-gemini', channel: { name: 'g', type: 'gemini', base_url: geminiUpstream.url, api_key: 'gemini-upstream-test', models: { 'r-gemini': 'gemini-2.5-flash' } } });
  await addRoutedModel(gateway, { model: 'r-openai', channel: { name: 'o', type: 'openai', base_url: openaiUpstream.url, api_key: 'sk-upstream-test', models: { 'r-openai': 'gpt-4o-mini' } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20, key: { allowed_mcp_servers: ['alpha'] } });
  denied = await seedAccount(gateway, { balanceUsd: 20, key: { allowed_mcp_servers: [] } });
  openai = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0, timeout: 30_000 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([alpha?.close(), beta?.close(), anthropicUpstream?.close(), geminiUpstream?.close(), openaiUpstream?.close()]);
});

async function usageRows(keyId: string): Promise<UsageRow[]> {
  await flushWrites(gateway);
  const { body } = await gateway.admin<{ data: UsageRow[] }>('GET', `/admin/usage?key_id=${keyId}&limit=200`);
  return body.data;
}

/** The usage rows of one client request: one per model round (`<id>-r<n>`), none under the request's own id. */
async function roundRows(requestId: string): Promise<UsageRow[]> {
  const rows = await usageRows(account.keyId);
  expect(rows.filter((row) => row.request_id === requestId)).toEqual([]);
  return rows.filter((row) => row.request_id.startsWith(`${requestId}-r`)).sort((a, b) => a.request_id.localeCompare(b.request_id));
}

const mcpTool = (extra: Partial<Tool.Mcp> = {}): Tool.Mcp => ({ type: 'mcp', server_label: 'alpha', server_url: alpha.url, require_approval: 'never', ...extra });

function ofType<T extends ResponseOutputItem['type']>(output: ResponseOutputItem[], type: T): Array<Extract<ResponseOutputItem, { type: T }>> {
  return output.filter((item): item is Extract<ResponseOutputItem, { type: T }> => item.type === type);
}

describe(`the Responses mcp tool for every model (${suiteDatabase()})`, () => {
  it.each(MODELS)('lists, calls and answers with the tool result through %s, each round billed once', async (model) => {
    const callsBefore = alpha.calls.length;
    const { data, response } = await openai.responses.create({ model, input: PROMPT, tools: [mcpTool()], store: false }).withResponse();
    expect(data.status).toBe('completed');
    const [listed] = ofType(data.output, 'mcp_list_tools');
    expect(listed).toMatchObject({ type: 'mcp_list_tools', server_label: 'alpha', error: null });
    expect(listed?.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['echo', 'add', 'whoami']));
    const [called] = ofType(data.output, 'mcp_call');
    expect(called).toMatchObject({ type: 'mcp_call', server_label: 'alpha', name: 'echo', status: 'completed', error: null, approval_request_id: null });
    expect(called?.output).toMatch(/^alpha: /);
    expect(JSON.parse(called?.arguments ?? '{}')).toHaveProperty('text');
    expect(data.output.at(-1)?.type).toBe('message');
    expect(data.output_text).toContain('alpha: ');
    expect(alpha.calls.slice(callsBefore)).toEqual(['echo']);

    const rows = await roundRows(response.headers.get('x-request-id') ?? '');
    expect(rows.map((row) => row.request_id.split('-r').at(-1))).toEqual(['1', '2']);
    for (const row of rows) expect(row).toMatchObject({ model, status: 200, endpoint: '/v1/responses' });
    expect(rows.every((row) => row.cost_usd > 0)).toBe(true);
    expect(data.usage?.input_tokens).toBe(rows.reduce((sum, row) => sum + row.prompt_tokens, 0));
    expect(data.usage?.output_tokens).toBe(rows.reduce((sum, row) => sum + row.completion_tokens, 0));
  });

  it('sends the registered sealed headers to the server, not the caller\'s own for the same name', async () => {
    const { data } = await openai.responses.create({
      model: 'r-gemini', input: 'call alpha__whoami with {}', store: false,
      tools: [mcpTool({ headers: { authorization: 'Bearer caller-made-up' } })],
    }).withResponse();
    expect(ofType(data.output, 'mcp_call')[0]?.output).toBe(ALPHA_SECRET);
  });

  it('names a server by its registered name, and narrows the tools to allowed_tools', async () => {
    const { data } = await openai.responses.create({
      model: 'r-gemini', input: 'call alpha__add with {"a":2,"b":3}', store: false,
      tools: [{ type: 'mcp', server_label: 'alpha', allowed_tools: ['add'], require_approval: 'never' }],
    }).withResponse();
    expect(ofType(data.output, 'mcp_list_tools')[0]?.tools.map((tool) => tool.name)).toEqual(['add']);
    expect(ofType(data.output, 'mcp_call')[0]).toMatchObject({ name: 'add', output: '5', status: 'completed' });
  });

  it('reports a tool\'s own error as a failed mcp_call and lets the model answer', async () => {
    const data = await openai.responses.create({ model: 'r-gemini', input: 'call alpha__fail with {}', store: false, tools: [mcpTool()] });
    const [failed] = ofType(data.output, 'mcp_call');
    expect(failed).toMatchObject({ name: 'fail', status: 'failed', error: { type: 'mcp_tool_execution_error' } });
    expect(data.output.at(-1)?.type).toBe('message');
  });

  it('asks for approval by default, then runs the approved call on the follow-up request', async () => {
    const callsBefore = alpha.calls.length;
    const first = await openai.responses.create({ model: 'r-anthropic', input: PROMPT, store: false, tools: [{ type: 'mcp', server_label: 'alpha', server_url: alpha.url }] });
    const [request] = ofType(first.output, 'mcp_approval_request');
    expect(request).toMatchObject({ type: 'mcp_approval_request', server_label: 'alpha', name: 'echo' });
    expect(request?.id).toMatch(/^mcpr_/);
    expect(ofType(first.output, 'mcp_call')).toEqual([]);
    expect(alpha.calls.length).toBe(callsBefore);

    const input: ResponseInputItem[] = [
      { role: 'user', content: PROMPT },
      ...(first.output as ResponseInputItem[]),
      { type: 'mcp_approval_response', approval_request_id: request?.id ?? '', approve: true },
    ];
    const second = await openai.responses.create({ model: 'r-anthropic', input, store: false, tools: [{ type: 'mcp', server_label: 'alpha', server_url: alpha.url }] });
    // The tools were listed in the input already: not again.
    expect(ofType(second.output, 'mcp_list_tools')).toEqual([]);
    const [call] = ofType(second.output, 'mcp_call');
    expect(call).toMatchObject({ name: 'echo', status: 'completed', approval_request_id: request?.id });
    expect(call?.output).toMatch(/^alpha: /);
    expect(second.output.at(-1)?.type).toBe('message');
    expect(second.output_text).toContain('alpha: ');
    expect(alpha.calls.slice(callsBefore)).toEqual(['echo']);
  });

  it('tells the model of a declined call and runs nothing', async () => {
    const callsBefore = alpha.calls.length;
    const tools: Tool[] = [{ type: 'mcp', server_label: 'alpha', server_url: alpha.url, require_approval: { always: { tool_names: ['echo'] } } }];
    const first = await openai.responses.create({ model: 'r-anthropic', input: PROMPT, store: false, tools });
    const [request] = ofType(first.output, 'mcp_approval_request');
    const second = await openai.responses.create({
      model: 'r-anthropic', store: false, tools,
      input: [{ role: 'user', content: PROMPT }, ...(first.output as ResponseInputItem[]), { type: 'mcp_approval_response', approval_request_id: request?.id ?? '', approve: false }],
    });
    expect(ofType(second.output, 'mcp_call')).toEqual([]);
    expect(second.output_text).toContain('declined');
    expect(alpha.calls.length).toBe(callsBefore);
  });

  it.each(MODELS)('streams the mcp items and the model\'s text through %s', async (model) => {
    const stream = await openai.responses.create({ model, input: PROMPT, tools: [mcpTool()], store: false, stream: true });
    const events: ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const types = events.map((event) => event.type);
    expect(types.slice(0, 2)).toEqual(['response.created', 'response.in_progress']);
    expect(types.at(-1)).toBe('response.completed');
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    const order = ['response.mcp_list_tools.in_progress', 'response.mcp_list_tools.completed', 'response.mcp_call_arguments.done', 'response.mcp_call.in_progress', 'response.mcp_call.completed', 'response.output_text.delta', 'response.output_text.done'];
    // The answer's text comes last (a model may say a few words before its call too).
    const positions = order.map((type) => types.lastIndexOf(type as ResponseStreamEvent['type']));
    expect(positions.every((position) => position >= 0), types.join(' ')).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
    const completed = events.at(-1) as Extract<ResponseStreamEvent, { type: 'response.completed' }>;
    const text = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : [])).join('');
    expect(text).toContain('alpha: ');
    expect(completed.response.output.map((item) => item.type)).toEqual(expect.arrayContaining(['mcp_list_tools', 'mcp_call', 'message']));
    const done = events.filter((event): event is Extract<ResponseStreamEvent, { type: 'response.output_item.done' }> => event.type === 'response.output_item.done');
    expect(done.map((event) => event.item)).toEqual(completed.response.output);
  });

  it.each(['r-anthropic', 'r-gemini'])('meters a model\'s tool calls as the MCP gateway meters its own through %s: a refused tool is not offered, a priced call is charged with its own usage row, the whole billed exactly', async (model) => {
    const servers = await gateway.admin<{ data: Array<{ id: string; name: string }> }>('GET', '/admin/mcp-servers');
    const alphaId = servers.body.data.find((server) => server.name === 'alpha')?.id ?? '';
    expect((await gateway.admin('PATCH', `/admin/mcp-servers/${alphaId}`, { price_per_call: '0.05', tool_rules: { default: 'allowed', tools: { whoami: 'refused' } } })).status).toBe(200);
    try {
      const balanceBefore = (await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${account.accountId}`)).body.balance_usd;
      const { data, response } = await openai.responses.create({ model, input: PROMPT, tools: [mcpTool()], store: false }).withResponse();
      const requestId = response.headers.get('x-request-id') ?? '';
      expect(ofType(data.output, 'mcp_list_tools')[0]?.tools.map((tool) => tool.name)).not.toContain('whoami');
      expect(ofType(data.output, 'mcp_call')[0]).toMatchObject({ name: 'echo', status: 'completed' });
      const rows = await usageRows(account.keyId);
      const toolRows = rows.filter((row) => row.request_id === `${requestId}-t1`);
      expect(toolRows).toHaveLength(1);
      expect(toolRows[0]).toMatchObject({ model: 'alpha__echo', status: 200, cost_usd: 0.05 });
      const rounds = rows.filter((row) => row.request_id.startsWith(`${requestId}-r`));
      expect(rounds).toHaveLength(2);
      // Each round at the model's price (1 and 2 USD per million input and output tokens: 1,000 and 2,000 nano-USD a token).
      for (const round of rounds) {
        expect(round).toMatchObject({ model, status: 200 });
        expect(Math.round(round.cost_usd * 1e9)).toBe(round.prompt_tokens * 1_000 + round.completion_tokens * 2_000);
      }
      expect(data.usage?.input_tokens).toBe(rounds.reduce((sum, row) => sum + row.prompt_tokens, 0));
      expect(data.usage?.output_tokens).toBe(rounds.reduce((sum, row) => sum + row.completion_tokens, 0));
      const roundCost = rounds.reduce((sum, row) => sum + Math.round(row.cost_usd * 1e9), 0);
      const balanceAfter = (await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${account.accountId}`)).body.balance_usd;
      expect(Math.round(balanceBefore * 1e9) - Math.round(balanceAfter * 1e9)).toBe(roundCost + 50_000_000);
    } finally {
      expect((await gateway.admin('PATCH', `/admin/mcp-servers/${alphaId}`, { price_per_call: null, tool_rules: { default: 'allowed', tools: {} } })).status).toBe(200);
    }
  });

  it('refuses a server URL that is not registered (never connecting to it), and a server the key may not use', async () => {
    const requestsBefore = beta.requests;
    const unregistered = openai.responses.create({ model: 'r-gemini', input: PROMPT, store: false, tools: [mcpTool({ server_url: 'http://127.0.0.1:9/elsewhere' })] });
    await expect(unregistered).rejects.toMatchObject({ status: 400, param: 'tools[0]' });
    const notAllowed = openai.responses.create({ model: 'r-gemini', input: PROMPT, store: false, tools: [mcpTool({ server_label: 'beta', server_url: beta.url })] });
    await expect(notAllowed).rejects.toMatchObject({ status: 400, param: 'tools[0]' });
    const other = new OpenAI({ baseURL: gateway.baseURL, apiKey: denied.key, maxRetries: 0 });
    await expect(other.responses.create({ model: 'r-gemini', input: PROMPT, store: false, tools: [mcpTool()] })).rejects.toMatchObject({ status: 400 });
    expect(beta.requests).toBe(requestsBefore);
  });
});

describe(`Anthropic's MCP connector for every model (${suiteDatabase()})`, () => {
  const anthropic = (): Anthropic => new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0, timeout: 30_000 });
  const servers = (): Anthropic.Beta.BetaRequestMCPServerURLDefinition[] => [{ type: 'url', url: alpha.url, name: 'alpha' }];

  it.each(MODELS)('answers with mcp_tool_use and mcp_tool_result blocks through %s, each round billed once', async (model) => {
    const callsBefore = alpha.calls.length;
    const { data, response } = await anthropic().beta.messages.create({
      model, max_tokens: 300, messages: [{ role: 'user', content: PROMPT }], mcp_servers: servers(), betas: ['mcp-client-2025-04-04'],
    }).withResponse();
    const types = data.content.map((block) => block.type);
    expect(types).toEqual(expect.arrayContaining(['mcp_tool_use', 'mcp_tool_result', 'text']));
    expect(types.indexOf('mcp_tool_use')).toBeLessThan(types.indexOf('mcp_tool_result'));
    const use = data.content.find((block) => block.type === 'mcp_tool_use');
    const result = data.content.find((block) => block.type === 'mcp_tool_result');
    expect(use).toMatchObject({ name: 'echo', server_name: 'alpha' });
    expect(result).toMatchObject({ tool_use_id: use?.type === 'mcp_tool_use' ? use.id : '', is_error: false });
    const resultText = result?.type === 'mcp_tool_result' && Array.isArray(result.content) ? result.content[0]?.text : '';
    expect(resultText).toMatch(/^alpha: /);
    const last = data.content.at(-1);
    expect(last?.type === 'text' ? last.text : '').toContain('alpha: ');
    expect(data.stop_reason).toBe('end_turn');
    expect(alpha.calls.slice(callsBefore)).toEqual(['echo']);

    const rows = await roundRows(response.headers.get('x-request-id') ?? '');
    expect(rows.length).toBe(2);
    for (const row of rows) expect(row).toMatchObject({ model, status: 200, endpoint: '/v1/messages' });
    expect(data.usage.input_tokens).toBe(rows.reduce((sum, row) => sum + row.prompt_tokens, 0));
    expect(data.usage.output_tokens).toBe(rows.reduce((sum, row) => sum + row.completion_tokens, 0));
  });

  it.each(MODELS)('streams the blocks through %s, the SDK\'s message accumulated from them', async (model) => {
    const stream = anthropic().beta.messages.stream({ model, max_tokens: 300, messages: [{ role: 'user', content: PROMPT }], mcp_servers: servers(), betas: ['mcp-client-2025-04-04'] });
    const texts: string[] = [];
    stream.on('text', (text) => texts.push(text));
    const message = await stream.finalMessage();
    const use = message.content.find((block) => block.type === 'mcp_tool_use');
    expect(use).toMatchObject({ name: 'echo', server_name: 'alpha' });
    expect(use?.type === 'mcp_tool_use' ? use.input : {}).toHaveProperty('text');
    expect(message.content.map((block) => block.type)).toEqual(expect.arrayContaining(['mcp_tool_result', 'text']));
    expect(texts.join('')).toContain('alpha: ');
    expect(message.usage.output_tokens).toBeGreaterThan(0);
  });

  it('continues a conversation that holds past mcp blocks', async () => {
    const first = await anthropic().beta.messages.create({ model: 'r-anthropic', max_tokens: 300, messages: [{ role: 'user', content: PROMPT }], mcp_servers: servers(), betas: ['mcp-client-2025-04-04'] });
    const second = await anthropic().beta.messages.create({
      model: 'r-anthropic', max_tokens: 300, mcp_servers: servers(), betas: ['mcp-client-2025-04-04'],
      messages: [{ role: 'user', content: PROMPT }, { role: 'assistant', content: first.content as Anthropic.Beta.BetaContentBlockParam[] }, { role: 'user', content: 'Thanks, say bye' }],
    });
    const last = second.content.at(-1);
    expect(last?.type === 'text' ? last.text : '').toContain('bye');
  });

  it('refuses mcp_servers without the beta header, an unregistered URL, and a server the key may not use', async () => {
    const plain = new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0 });
    await expect(plain.beta.messages.create({ model: 'r-anthropic', max_tokens: 50, messages: [{ role: 'user', content: PROMPT }], mcp_servers: servers() })).rejects.toMatchObject({ status: 400 });
    await expect(anthropic().beta.messages.create({
      model: 'r-anthropic', max_tokens: 50, messages: [{ role: 'user', content: PROMPT }], betas: ['mcp-client-2025-04-04'],
      mcp_servers: [{ type: 'url', url: 'http://169.254.169.254/latest', name: 'metadata' }],
    })).rejects.toMatchObject({ status: 400 });
    await expect(anthropic().beta.messages.create({
      model: 'r-anthropic', max_tokens: 50, messages: [{ role: 'user', content: PROMPT }], betas: ['mcp-client-2025-04-04'],
      mcp_servers: [{ type: 'url', url: beta.url, name: 'beta' }],
    })).rejects.toMatchObject({ status: 400 });
  });
});
