import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgentCli, type AgentCliRun } from '../../support/agent-cli.js';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { signatureFor, startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

/** The Codex CLI from the npm registry (`@openai/codex`, a dev dependency, with its bundled binary). */
const CODEX = path.resolve('node_modules/.bin/codex');

let gateway: TestGateway;
let openai: MockOpenAIUpstream;
let anthropic: MockAnthropicUpstream;
let gemini: MockGeminiUpstream;
let account: SeededAccount;
let home: string;

const FAMILIES = [
  { family: 'openai-responses', model: 'cli-openai' },
  { family: 'openai-chat', model: 'cli-compatible' },
  { family: 'anthropic', model: 'cli-anthropic' },
  { family: 'gemini', model: 'cli-gemini' },
] as const;

beforeAll(async () => {
  [openai, anthropic, gemini] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream()]);
  gateway = await startTestGateway();
  await addRoutedModel(gateway, { model: 'cli-openai', channel: { name: 'o', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: { 'cli-openai': 'gpt-5.1' } } });
  await addRoutedModel(gateway, { model: 'cli-compatible', channel: { name: 'c', type: 'openai-compatible', base_url: openai.url, api_key: 'sk-upstream-test', models: { 'cli-compatible': 'gpt-4o-mini' } } });
  await addRoutedModel(gateway, { model: 'cli-anthropic', channel: { name: 'a', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { 'cli-anthropic': 'claude-sonnet-4-5' } } });
  await addRoutedModel(gateway, { model: 'cli-gemini', channel: { name: 'g', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { 'cli-gemini': 'gemini-3-pro-preview' } } });
  // Without Google's placeholder: Gemini 3 refuses a call of the current turn that comes back without its signature.
  await addRoutedModel(gateway, { model: 'cli-gemini-signed', channel: { name: 'g-signed', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { 'cli-gemini-signed': 'gemini-3-pro-preview' }, settings: { dummy_thought_signatures: false } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
  // Codex's own configuration: the gateway as a custom provider on the Responses wire, nothing else changed.
  home = await mkdtemp(path.join(tmpdir(), 'unigate-codex-'));
  await mkdir(path.join(home, 'work'));
  await writeFile(path.join(home, 'config.toml'), [
    'model_provider = "unigate"',
    '[model_providers.unigate]',
    'name = "unigate"',
    `base_url = "${gateway.url}/v1"`,
    'env_key = "UNIGATE_API_KEY"',
    'wire_api = "responses"',
    '',
  ].join('\n'));
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close()]);
  if (home !== undefined) await rm(home, { recursive: true, force: true });
});

/** `codex exec` with no stdin (Codex reads a piped stdin to its end before it starts). */
function codexExec(model: string, prompt: string): Promise<AgentCliRun> {
  return runAgentCli(CODEX, ['exec', '--skip-git-repo-check', '--color', 'never', '-C', path.join(home, 'work'), '-m', model, prompt], {
    env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, UNIGATE_API_KEY: account.key, NO_COLOR: '1' },
  });
}

describe.skipIf(!existsSync(CODEX))('the Codex CLI, as installed, through the gateway', () => {
  it.each(FAMILIES)('runs a tool loop with its namespaced tools and default web search ($family)', async ({ model }) => {
    const result = await codexExec(model, 'call close_agent');
    expect(result.code, result.stderr).toBe(0);
    // The mock called the namespaced tool; Codex ran it and sent its output back; the answer names the tool.
    expect(result.stdout).toMatch(/close_agent(?: returned|=)/);
  }, 90_000);

  it("hands Gemini 3's signature of a call back to Gemini on the next turn, through the reasoning items it keeps", async () => {
    const args = { cmd: 'echo codex-tool-ran' };
    const result = await codexExec('cli-gemini-signed', `call exec_command with ${JSON.stringify(args)}`);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/Tool results: exec_command=.*codex-tool-ran/);
    type Body = { contents: Array<{ role: string; parts: Array<{ functionCall?: { name: string; args: unknown }; functionResponse?: { name: string }; thoughtSignature?: string }> }> };
    const next = gemini.requests.map((request) => request.body as Body).find((body) => body.contents.some((content) => content.parts.some((part) => part.functionResponse?.name === 'exec_command')));
    const call = next?.contents.flatMap((content) => content.parts).find((part) => part.functionCall?.name === 'exec_command');
    expect(call?.functionCall?.args).toEqual(args);
    expect(call?.thoughtSignature).toBe(signatureFor(`gemini-3-pro-preview:exec_command:${JSON.stringify(args)}`));
  }, 90_000);

  it('searches the web through Anthropic\'s server tool and shows the answer', async () => {
    const result = await codexExec('cli-anthropic', 'search the web for the unigate release notes');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/maps web search/);
    const sent = anthropic.requests.at(-1)?.body as { tools: Array<{ type?: string }> };
    expect(sent.tools.some((tool) => tool.type === 'web_search_20250305')).toBe(true);
  }, 90_000);
});
