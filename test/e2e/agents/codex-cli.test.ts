import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
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
function codexExec(model: string, prompt: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(CODEX, ['exec', '--skip-git-repo-check', '--color', 'never', '-C', path.join(home, 'work'), '-m', model, prompt], {
      env: { PATH: process.env.PATH ?? '', HOME: home, CODEX_HOME: home, UNIGATE_API_KEY: account.key, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? 1, stdout, stderr });
    });
  });
}

describe.skipIf(!existsSync(CODEX))('the Codex CLI, as installed, through the gateway', () => {
  it.each(FAMILIES)('runs a tool loop with its namespaced tools and default web search ($family)', async ({ model }) => {
    const result = await codexExec(model, 'call close_agent');
    expect(result.code, result.stderr).toBe(0);
    // The mock called the namespaced tool; Codex ran it and sent its output back; the answer names the tool.
    expect(result.stdout).toMatch(/close_agent(?: returned|=)/);
  }, 90_000);

  it('searches the web through Anthropic\'s server tool and shows the answer', async () => {
    const result = await codexExec('cli-anthropic', 'search the web for the unigate release notes');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/maps web search/);
    const sent = anthropic.requests.at(-1)?.body as { tools: Array<{ type?: string }> };
    expect(sent.tools.some((tool) => tool.type === 'web_search_20250305')).toBe(true);
  }, 90_000);
});
