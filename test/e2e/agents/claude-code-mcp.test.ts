/**
 * The Claude Code CLI, as installed, with the gateway's /mcp as its MCP server over HTTP, offline but for the gateway:
 * configured the two ways its docs give (`claude mcp add --transport http … --header`, and `--mcp-config` JSON with
 * `type: "http"`, `url` and `headers`), its model routed to the mock Gemini upstream, which calls the tool the prompt
 * names. Claude Code lists the gateway's tools as `mcp__<its name for the server>__<server>__<tool>`, calls them
 * through the gateway on the real MCP servers, and prints the model's answer carrying the result; each call is one
 * usage row charged the server's price exactly. A key not allowed a server never offers its tools to the model and
 * cannot call them directly.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgentCli, type AgentCliRun } from '../../support/agent-cli.js';
import { MODEL, expectBetaWithheldFromNarrowKey, expectBothServersCalledAndCharged, startMcpAgentSetup, type McpAgentSetup } from './mcp-agent-setup.js';

/** The Claude Code CLI from the npm registry (`@anthropic-ai/claude-code`, a dev dependency). */
const CLAUDE = path.resolve('node_modules/.bin/claude');

let setup: McpAgentSetup;
let home: string;

beforeAll(async () => {
  setup = await startMcpAgentSetup();
  home = await mkdtemp(path.join(tmpdir(), 'unigate-claude-mcp-'));
  await Promise.all([mkdir(path.join(home, 'work')), mkdir(path.join(home, 'narrow'))]);
});

afterAll(async () => {
  await setup?.close();
  if (home !== undefined) await rm(home, { recursive: true, force: true });
});

function claude(args: string[], cwd: string): Promise<AgentCliRun> {
  return runAgentCli(CLAUDE, args, {
    cwd,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      ANTHROPIC_BASE_URL: setup.gateway.url,
      ANTHROPIC_API_KEY: setup.modelPayer.key,
      ANTHROPIC_SMALL_FAST_MODEL: MODEL,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: MODEL,
      // Claude Code otherwise defers MCP tools behind its ToolSearch tool, which the model would have to call first.
      ENABLE_TOOL_SEARCH: 'false',
      // Claude Code otherwise connects MCP servers in the background, and on a loaded machine its first turn can go
      // to the model before the gateway's tools are listed: the model is then offered none (seen on PostgreSQL).
      MCP_CONNECTION_NONBLOCKING: 'false',
      MCP_TIMEOUT: '60000',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      NO_COLOR: '1',
    },
    timeoutMs: 60_000,
  });
}

/** `claude -p` with JSON output, the gateway's MCP tools allowed without a prompt; the printed result. */
async function ask(prompt: string, cwd: string, extra: string[] = []): Promise<string> {
  const run = await claude([...extra, '-p', prompt, '--output-format', 'json', '--model', MODEL, '--allowedTools', 'mcp__unigate'], cwd);
  expect(run.code, run.stderr + run.stdout).toBe(0);
  const printed = JSON.parse(run.stdout) as { is_error: boolean; result: string; permission_denials: unknown[] };
  expect(printed.is_error, run.stdout).toBe(false);
  expect(printed.permission_denials).toEqual([]);
  return printed.result;
}

describe.skipIf(!existsSync(CLAUDE))('Claude Code with the gateway\'s /mcp as its HTTP MCP server', () => {
  it('calls tools of both servers through the gateway, each charged the server\'s price once', async () => {
    const cwd = path.join(home, 'work');
    const added = await claude(['mcp', 'add', '--transport', 'http', 'unigate', `${setup.gateway.url}/mcp`, '--header', `Authorization: Bearer ${setup.toolPayer.key}`], cwd);
    expect(added.code, added.stderr + added.stdout).toBe(0);
    // Claude Code's own health check of the server: it initialized a session on /mcp with the key.
    const listed = await claude(['mcp', 'list'], cwd);
    expect(listed.stdout).toMatch(/unigate: http:\/\/127\.0\.0\.1:\d+\/mcp \(HTTP\) - ✔ Connected/);

    const from = setup.gemini.requests.length;
    const sum = await ask('call mcp__unigate__alpha__add with {"a":2,"b":40}', cwd);
    // The mock model answers the tool's result as "Tool results: <name>=<result>": the sum the alpha server computed.
    expect(sum).toMatch(/^Tool results: mcp__unigate__alpha__add=.*\b42\b/);
    const echoed = await ask('call mcp__unigate__beta__echo with {"text":"through Claude Code"}', cwd);
    expect(echoed).toMatch(/^Tool results: mcp__unigate__beta__echo=.*beta: through Claude Code/);
    await expectBothServersCalledAndCharged(setup, from);
  }, 180_000);

  it('with --mcp-config and a key allowed alpha only: beta\'s tools never reach the model, and a direct call is refused', async () => {
    const cwd = path.join(home, 'narrow');
    const config = path.join(home, 'narrow-mcp.json');
    await writeFile(config, JSON.stringify({ mcpServers: { unigate: { type: 'http', url: `${setup.gateway.url}/mcp`, headers: { Authorization: `Bearer ${setup.narrow.key}` } } } }));
    const betaCalls = setup.beta.calls.length;
    const from = setup.gemini.requests.length;
    const answer = await ask('call mcp__unigate__beta__echo with {"text":"not allowed"}', cwd, ['--mcp-config', config, '--strict-mcp-config']);
    // No tool of that name was offered, so the mock model just echoes the prompt.
    expect(answer).toMatch(/^Echo: /);
    await expectBetaWithheldFromNarrowKey(setup, from, betaCalls);
  }, 180_000);
});
