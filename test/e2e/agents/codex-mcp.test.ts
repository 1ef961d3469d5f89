/**
 * The Codex CLI, as installed, with the gateway's /mcp as a streamable HTTP MCP server in its config.toml
 * (`[mcp_servers.<name>]` with `url` and `bearer_token_env_var`), offline but for the gateway: its model on the
 * gateway's Responses API, routed to the mock Gemini upstream, which calls the tool the prompt names. Codex lists
 * the gateway's tools as `mcp__<its name for the server>__<server>__<tool>`, calls them through the gateway on the
 * real MCP servers and prints the model's answer carrying the result; each call is one usage row charged the
 * server's price exactly. A key not allowed a server never offers its tools to the model and cannot call them.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgentCli, type AgentCliRun } from '../../support/agent-cli.js';
import { MODEL, expectBetaWithheldFromNarrowKey, expectBothServersCalledAndCharged, startMcpAgentSetup, type McpAgentSetup } from './mcp-agent-setup.js';

/** The Codex CLI from the npm registry (`@openai/codex`, a dev dependency, with its bundled binary). */
const CODEX = path.resolve('node_modules/.bin/codex');

let setup: McpAgentSetup;
let home: string;

beforeAll(async () => {
  setup = await startMcpAgentSetup();
  home = await mkdtemp(path.join(tmpdir(), 'unigate-codex-mcp-'));
  await mkdir(path.join(home, 'work'));
  await writeFile(path.join(home, 'config.toml'), [
    'model_provider = "unigate"',
    '',
    '[model_providers.unigate]',
    'name = "unigate"',
    `base_url = "${setup.gateway.url}/v1"`,
    'env_key = "UNIGATE_API_KEY"',
    'wire_api = "responses"',
    '',
    '[mcp_servers.unigate]',
    `url = "${setup.gateway.url}/mcp"`,
    'bearer_token_env_var = "UNIGATE_MCP_KEY"',
    // Codex asks before every MCP call unless told otherwise, and `codex exec` cannot ask.
    'default_tools_approval_mode = "approve"',
    // Codex starts a turn once an optional server is late, and gives a server 10 s to start (initialize, list its
    // tools): on a loaded machine the model was then offered none of the gateway's tools. A required server is
    // waited for (a run fails if it cannot start), for up to a minute.
    'required = true',
    'startup_timeout_sec = 60',
    '',
  ].join('\n'));
});

afterAll(async () => {
  await setup?.close();
  if (home !== undefined) await rm(home, { recursive: true, force: true });
});

/** `codex exec` with the MCP key given; its stdout ends with the model's last answer. */
async function codexExec(prompt: string, mcpKey: string): Promise<AgentCliRun> {
  const run = await runAgentCli(CODEX, ['exec', '--skip-git-repo-check', '--color', 'never', '-C', path.join(home, 'work'), '-m', MODEL, prompt], {
    env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, UNIGATE_API_KEY: setup.modelPayer.key, UNIGATE_MCP_KEY: mcpKey, NO_COLOR: '1' },
    timeoutMs: 90_000,
  });
  expect(run.code, run.stderr).toBe(0);
  return run;
}

describe.skipIf(!existsSync(CODEX))('Codex with the gateway\'s /mcp as its streamable HTTP MCP server', () => {
  it('calls tools of both servers through the gateway, each charged the server\'s price once', async () => {
    const from = setup.gemini.requests.length;
    const sum = await codexExec('call mcp__unigate__alpha__add with {"a":2,"b":40}', setup.toolPayer.key);
    // Codex's own log of the call, then the mock model's answer: "Tool results: <name>=<what Codex sent back>".
    expect(sum.stderr).toMatch(/mcp: unigate\/alpha__add \(completed\)/);
    expect(sum.stdout).toMatch(/Tool results: mcp__unigate__alpha__add=.*\b42\b/);
    const echoed = await codexExec('call mcp__unigate__beta__echo with {"text":"through Codex"}', setup.toolPayer.key);
    expect(echoed.stdout).toMatch(/Tool results: mcp__unigate__beta__echo=.*beta: through Codex/);
    await expectBothServersCalledAndCharged(setup, from);
  }, 180_000);

  it('with a key allowed alpha only: beta\'s tools never reach the model, and a direct call is refused', async () => {
    const betaCalls = setup.beta.calls.length;
    const from = setup.gemini.requests.length;
    const run = await codexExec('call mcp__unigate__beta__echo with {"text":"not allowed"}', setup.narrow.key);
    // No tool of that name was offered, so the mock model just echoes the prompt.
    expect(run.stdout).toMatch(/Echo: /);
    expect(run.stderr).not.toMatch(/mcp: unigate\/beta__/);
    await expectBetaWithheldFromNarrowKey(setup, from, betaCalls);
  }, 180_000);
});
