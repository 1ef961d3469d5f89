/**
 * What the coding agents' MCP tests share: a gateway on the suite's database with a routed model on the mock Gemini
 * upstream (which calls a tool when the prompt says `call <tool> with {…}` and answers a tool result with
 * "Tool results: <name>=<result JSON>"), two real MCP servers built with the official SDK registered with a price per
 * call (`alpha` on Streamable HTTP, `beta` on the older HTTP+SSE transport), and three accounts: one paying the
 * model's tokens, one whose key may use both servers, one whose key may use `alpha` only. The agents' MCP
 * configuration carries a key of its own, so a tool's charges are seen apart from the model's tokens.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockMcpServer, type MockMcpServer } from '../../support/mock-mcp-server.js';

export const MODEL = 'mcp-coder';
export const ALPHA_PRICE = 0.25;
export const BETA_PRICE = 0.125;
export const TOOL_BALANCE = 5;

export interface McpAgentSetup {
  gateway: TestGateway;
  gemini: MockGeminiUpstream;
  alpha: MockMcpServer;
  beta: MockMcpServer;
  modelPayer: SeededAccount;
  /** A key allowed both servers. */
  toolPayer: SeededAccount;
  /** A key allowed `alpha` only. */
  narrow: SeededAccount;
  close(): Promise<void>;
}

export async function startMcpAgentSetup(): Promise<McpAgentSetup> {
  const [gemini, alpha, beta] = await Promise.all([startMockGeminiUpstream(), startMockMcpServer('alpha', 'streamable-http'), startMockMcpServer('beta', 'sse')]);
  // The mock servers listen on 127.0.0.1: this gateway allows private addresses, as an operator would for them.
  const gateway = await startTestGateway({ env: { MCP_ALLOW_PRIVATE_ADDRESSES: 'true' } });
  await addRoutedModel(gateway, { model: MODEL, channel: { name: 'g', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { [MODEL]: 'gemini-2.5-flash' } } });
  await gateway.gateway.services.catalog.reload();
  for (const server of [
    { name: 'alpha', url: alpha.url, price_per_call: String(ALPHA_PRICE) },
    { name: 'beta', url: beta.url, transport: 'sse', price_per_call: String(BETA_PRICE) },
  ]) {
    const created = await gateway.admin('POST', '/admin/mcp-servers', server);
    if (created.status !== 201) throw new Error(`MCP server creation failed: ${JSON.stringify(created.body)}`);
  }
  const [modelPayer, toolPayer, narrow] = await Promise.all([
    seedAccount(gateway, { balanceUsd: 20, key: { allowed_mcp_servers: [] } }),
    seedAccount(gateway, { balanceUsd: TOOL_BALANCE, key: { allowed_mcp_servers: ['alpha', 'beta'] } }),
    seedAccount(gateway, { balanceUsd: TOOL_BALANCE, key: { allowed_mcp_servers: ['alpha'] } }),
  ]);
  return {
    gateway, gemini, alpha, beta, modelPayer, toolPayer, narrow,
    async close() {
      await gateway.close();
      await Promise.all([gemini.close(), alpha.close(), beta.close()]);
    },
  };
}

export interface McpUsageRow { status: number; error_code: string | null; cost_usd: number; mcp: { server: string; tool: string } | null }

/** The account's usage rows and balance once queued writes are in. */
export async function ledgerOf(gateway: TestGateway, accountId: string): Promise<{ rows: McpUsageRow[]; balance: number }> {
  await flushWrites(gateway);
  const rows = (await gateway.admin<{ data: McpUsageRow[] }>('GET', `/admin/usage?account_id=${accountId}`)).body.data;
  const account = await gateway.admin<{ balance_usd: number }>('GET', `/admin/accounts/${accountId}`);
  return { rows, balance: account.body.balance_usd };
}

type GeminiTools = { tools?: Array<{ functionDeclarations?: Array<{ name: string }> }> };

/** The function names each request the model upstream got from `from` on offered the model. */
export function offeredTools(gemini: MockGeminiUpstream, from: number): string[][] {
  return gemini.requests.slice(from).map((request) => ((request.body as GeminiTools).tools ?? []).flatMap((tool) => (tool.functionDeclarations ?? []).map((declaration) => declaration.name)));
}

/** A direct tools/call on the gateway's /mcp with the official SDK client: the error it ends with, if any. */
export async function directCall(gateway: TestGateway, key: string, name: string, args: Record<string, unknown>): Promise<unknown> {
  const client = new Client({ name: 'direct', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${key}` } } }));
  try {
    const { tools } = await client.listTools();
    if (tools.some((tool) => tool.name === name)) throw new Error(`${name} is listed`);
    return await client.callTool({ name, arguments: args }).then(() => null, (error: unknown) => error);
  } finally {
    await client.close();
  }
}

/**
 * After an agent called `alpha__add` then `beta__echo` through the gateway: each server saw exactly its call, the model
 * was offered every tool of both servers (in the turns that offered tools; an agent's background calls may offer
 * none), and the tool account paid exactly the two per-call prices.
 */
export async function expectBothServersCalledAndCharged(setup: McpAgentSetup, from: number): Promise<void> {
  expect(setup.alpha.calls).toEqual(['add']);
  expect(setup.beta.calls).toEqual(['echo']);
  const offered = offeredTools(setup.gemini, from).find((names) => names.length > 0) ?? [];
  for (const server of ['alpha', 'beta']) for (const tool of ['add', 'echo', 'fail', 'hang', 'whoami']) expect(offered).toContain(`mcp__unigate__${server}__${tool}`);
  const { rows, balance } = await ledgerOf(setup.gateway, setup.toolPayer.accountId);
  expect(rows.map((row) => ({ status: row.status, cost: row.cost_usd, server: row.mcp?.server, tool: row.mcp?.tool })).sort((a, b) => a.cost - b.cost)).toEqual([
    { status: 200, cost: BETA_PRICE, server: 'beta', tool: 'echo' },
    { status: 200, cost: ALPHA_PRICE, server: 'alpha', tool: 'add' },
  ]);
  expect(balance).toBe(TOOL_BALANCE - ALPHA_PRICE - BETA_PRICE);
}

/**
 * What a key allowed alpha only must show after an agent asked for one of beta's tools (`from`: the model requests
 * before it, `betaCalls`: beta's calls before it): the model was offered alpha's tools and none of beta's, beta was never
 * called, a direct call of beta's tool through /mcp is refused as an unknown tool, and the account paid nothing.
 */
export async function expectBetaWithheldFromNarrowKey(setup: McpAgentSetup, from: number, betaCalls: number): Promise<void> {
  const offered = offeredTools(setup.gemini, from).filter((names) => names.length > 0);
  expect(offered.length).toBeGreaterThan(0);
  for (const names of offered) {
    expect(names).toContain('mcp__unigate__alpha__echo');
    expect(names.filter((name) => name.includes('beta'))).toEqual([]);
  }
  expect(setup.beta.calls.length).toBe(betaCalls);

  const refused = await directCall(setup.gateway, setup.narrow.key, 'beta__echo', { text: 'direct' });
  expect(refused).toBeInstanceOf(McpError);
  expect((refused as McpError).code).toBe(-32602);
  expect(setup.beta.calls.length).toBe(betaCalls);
  const { rows, balance } = await ledgerOf(setup.gateway, setup.narrow.accountId);
  expect(rows.filter((row) => row.cost_usd !== 0)).toEqual([]);
  expect(balance).toBe(TOOL_BALANCE);
}
