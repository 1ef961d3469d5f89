import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runAgentCli, type AgentCliRun } from '../../support/agent-cli.js';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { signatureFor, startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';

/**
 * The Claude Code CLI from the npm registry (`@anthropic-ai/claude-code`, a dev dependency): its postinstall links
 * the platform package's native binary over bin/claude.exe, which node_modules/.bin/claude points at.
 */
const CLAUDE = path.resolve('node_modules/.bin/claude');
const UPSTREAM_MODEL = 'gemini-3-pro-preview';

let gateway: TestGateway;
let gemini: MockGeminiUpstream;
let anthropic: MockAnthropicUpstream;
let account: SeededAccount;
let home: string;

beforeAll(async () => {
  [gemini, anthropic] = await Promise.all([startMockGeminiUpstream(), startMockAnthropicUpstream()]);
  gateway = await startTestGateway();
  // The channel as an operator leaves it: Gemini 3 gets Google's placeholder for calls that never had a signature.
  await addRoutedModel(gateway, { model: 'gemini-coder', channel: { name: 'g', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { 'gemini-coder': UPSTREAM_MODEL } } });
  // One public model on Gemini first and Anthropic behind it (failover).
  await addRoutedModel(gateway, { model: 'mixed-coder', channel: { name: 'mixed-g', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', priority: 10, models: { 'mixed-coder': UPSTREAM_MODEL } } });
  await addRoutedModel(gateway, { model: 'mixed-coder', channel: { name: 'mixed-a', type: 'anthropic', base_url: anthropic.url, api_key: 'sk-ant-upstream-test', models: { 'mixed-coder': 'claude-sonnet-4-5' } } });
  await gateway.gateway.services.catalog.reload();
  account = await seedAccount(gateway, { balanceUsd: 20 });
  home = await mkdtemp(path.join(tmpdir(), 'unigate-claude-code-'));
  await mkdir(path.join(home, 'work'));
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([gemini?.close(), anthropic?.close()]);
  if (home !== undefined) await rm(home, { recursive: true, force: true });
});

/** `claude -p` in print mode with JSON output, offline except for the gateway, with a throw-away home. */
function claudePrint(model: string, prompt: string, allowedTools: string, options: { cwd?: string; continue?: boolean } = {}): Promise<AgentCliRun> {
  return runAgentCli(CLAUDE, [...(options.continue === true ? ['--continue'] : []), '-p', prompt, '--output-format', 'json', '--model', model, '--allowedTools', allowedTools], {
    cwd: options.cwd ?? path.join(home, 'work'),
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      ANTHROPIC_BASE_URL: gateway.url,
      ANTHROPIC_API_KEY: account.key,
      // Claude Code's background calls (titles, summaries) go to its small model: the same routed model here.
      ANTHROPIC_SMALL_FAST_MODEL: model,
      ANTHROPIC_DEFAULT_HAIKU_MODEL: model,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_AUTOUPDATER: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
      NO_COLOR: '1',
    },
    timeoutMs: 60_000,
  });
}

type GeminiPart = { text?: string; functionCall?: { name: string; args: Record<string, unknown> }; functionResponse?: { name: string; response: Record<string, unknown> }; thoughtSignature?: string };
type GeminiBody = { contents: Array<{ role: string; parts: GeminiPart[] }>; generationConfig?: { thinkingConfig?: Record<string, unknown> } };

describe.skipIf(!existsSync(CLAUDE))('the Claude Code CLI, as installed, through the gateway on Gemini 3', () => {
  it('runs a Bash tool loop with thinking and prints the model\'s answer as its result', async () => {
    const command = { command: 'echo unigate-tool-ran', description: 'Print a marker' };
    const run = await claudePrint('gemini-coder', `call Bash with ${JSON.stringify(command)}`, 'Bash');
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const printed = JSON.parse(run.stdout) as { type: string; subtype: string; is_error: boolean; result: string };
    expect(printed).toMatchObject({ type: 'result', subtype: 'success', is_error: false });
    // The mock answers a tool result with "Tool results: <name>=<response>": Claude Code ran Bash and printed that text.
    expect(printed.result).toMatch(/^Tool results: Bash=.*unigate-tool-ran/);

    const bodies = gemini.requests.map((request) => request.body as GeminiBody);
    const first = bodies.find((body) => body.contents.at(-1)?.parts.some((part) => part.text?.includes('call Bash')) === true);
    expect(first?.generationConfig?.thinkingConfig, 'Claude Code asked for thinking').toBeDefined();
    // The next turn carries Gemini's own signature on the call back, not Google's placeholder.
    const next = bodies.find((body) => body.contents.some((content) => content.parts.some((part) => part.functionResponse?.name === 'Bash')));
    const call = next?.contents.flatMap((content) => content.parts).find((part) => part.functionCall?.name === 'Bash');
    expect(call?.functionCall?.args).toEqual(command);
    expect(call?.thoughtSignature).toBe(signatureFor(`${UPSTREAM_MODEL}:Bash:${JSON.stringify(command)}`));
  }, 120_000);

  it('goes on on Anthropic when the model fails over there mid-conversation: the gateway\'s carriers stay behind', async () => {
    const cwd = path.join(home, 'failover');
    await mkdir(cwd);
    const command = { command: 'echo unigate-before-failover', description: 'Print a marker' };
    const first = await claudePrint('mixed-coder', `call Bash with ${JSON.stringify(command)}`, 'Bash', { cwd });
    expect(first.code, first.stderr + first.stdout).toBe(0);
    // Claude Code keeps the thinking blocks of the same model, so the carriers come back; Gemini is down now.
    gemini.setFault({ kind: 'status', status: 503 });
    try {
      const next = await claudePrint('mixed-coder', 'Say the word pelican', 'Bash', { cwd, continue: true });
      expect(next.code, next.stderr + next.stdout).toBe(0);
      // The mock echoes the last user turn (Claude Code puts its reminders before the prompt).
      expect(JSON.parse(next.stdout)).toMatchObject({ is_error: false, result: expect.stringMatching(/^Echo: /) as string });
    } finally {
      gemini.setFault(null);
    }
    // Every request Anthropic got carried the Gemini turns, none a block Anthropic refuses (Claude Code would retry a
    // refused one without its thinking blocks: the first attempt would be lost).
    const sent = anthropic.requests.filter((request) => request.path === '/v1/messages').map((request) => JSON.stringify(request.body));
    const continued = sent.filter((body) => body.includes('Say the word pelican'));
    expect(continued.length, 'the Gemini turns went to Anthropic with the new question').toBeGreaterThan(0);
    for (const body of continued) {
      expect(body).toContain('unigate-before-failover');
      expect(body).not.toContain('ugw1.');
    }
  }, 120_000);
});
