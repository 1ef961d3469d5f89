/**
 * The README's shell examples, run as written (bash + curl) against a gateway whose only configuration is the three
 * provider keys pointing at mock upstreams: every curl must answer 2xx. Only the address, the admin token and the
 * rerank example's Cohere address (a mock Cohere here) are substituted, and the Vertex example's `key.json` is a generated
 * service-account key; commands that are not calls to the gateway (npm, npx, starting
 * `bin/unigate.js`) and the redeem example (its code is a
 * placeholder) are left out. Every model id the README's code names must be one the gateway serves.
 */
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../support/gateway-harness.js';
import { wavOfSeconds } from '../support/audio-fixtures.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../support/mock-gemini-upstream.js';
import { MOCK_PNG_BASE64 } from '../support/mock-openai-media-answers.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../support/mock-openai-upstream.js';
import { startMockRerankUpstream, type MockRerankUpstream } from '../support/mock-rerank-upstream.js';

const README = path.resolve(import.meta.dirname, '../../README.md');
const run = promisify(execFile);

let openai: MockOpenAIUpstream;
let anthropic: MockAnthropicUpstream;
let gemini: MockGeminiUpstream;
let cohere: MockRerankUpstream;
let gateway: TestGateway;
let directory: string;
let readme: string;

/** The fenced blocks of one language, with the line each starts on. */
function blocks(language: string): Array<{ line: number; text: string }> {
  const found: Array<{ line: number; text: string }> = [];
  const pattern = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, 'gm');
  for (const match of readme.matchAll(pattern)) found.push({ line: readme.slice(0, match.index).split('\n').length, text: match[1] as string });
  return found;
}

/** A block's commands with `\` continuations joined, comments and blank lines dropped. */
function commands(text: string): string[] {
  return text.replace(/\\\n\s*/g, ' ').split('\n').map((line) => line.replace(/\s+#.*$/, '').trim()).filter((line) => line !== '' && !line.startsWith('#'));
}

const shellQuote = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;

beforeAll(async () => {
  readme = await readFile(README, 'utf8');
  [openai, anthropic, gemini, cohere] = await Promise.all([startMockOpenAIUpstream(), startMockAnthropicUpstream(), startMockGeminiUpstream(), startMockRerankUpstream('cohere', { apiKey: 'co-your-cohere-key' })]);
  gateway = await startTestGateway({
    env: {
      OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: openai.url,
      ANTHROPIC_API_KEY: 'sk-ant-upstream-test', ANTHROPIC_BASE_URL: anthropic.url,
      GEMINI_API_KEY: 'gemini-upstream-test', GEMINI_BASE_URL: gemini.url,
      // The README registers MCP servers under example.com, which does not resolve here; allowing private addresses
      // skips the registration's address check (its refusals are tested in test/e2e/mcp).
      MCP_ALLOW_PRIVATE_ADDRESSES: 'true',
    },
  });
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-readme-'));
  await writeFile(path.join(directory, 'speech.wav'), wavOfSeconds(2));
  await writeFile(path.join(directory, 'harbour.png'), Buffer.from(MOCK_PNG_BASE64, 'base64'));
  // The Vertex ranker example registers a channel with `$(cat key.json)`: a service-account key of Google's shape.
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  await writeFile(path.join(directory, 'key.json'), JSON.stringify({
    type: 'service_account', project_id: 'readme-project', private_key_id: 'readme-key',
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }), client_email: 'gateway@readme-project.iam.gserviceaccount.com',
  }));
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openai?.close(), anthropic?.close(), gemini?.close(), cohere?.close()]);
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe('README examples', () => {
  it('every curl example answers 2xx, in order, as written', async () => {
    const script = ['set -euo pipefail', 'curl() { command curl --silent --show-error --fail-with-body "$@"; echo; }'];
    let calls = 0;
    for (const block of blocks('sh')) {
      for (const command of commands(block.text)) {
        if (/(^|\s)(npm|npx) /.test(command) || command.includes('bin/unigate.js') || command.includes('/billing/redeem')) continue;
        const line = command.replace(/^ADMIN=adm_\S*/, `ADMIN=${gateway.adminToken}`).replaceAll('http://127.0.0.1:8080', gateway.url).replaceAll('https://api.cohere.com', cohere.url);
        script.push(`echo ${shellQuote(`README line ${block.line}: ${command.slice(0, 80)}`)} >&2`, line);
        if (command.includes('curl ')) calls += 1;
      }
    }
    expect(calls).toBeGreaterThanOrEqual(20);
    const result = await run('bash', ['-c', script.join('\n')], { cwd: directory, timeout: 60_000, maxBuffer: 16 * 1024 * 1024 }).catch((error: { stdout: string; stderr: string; code: number }) => error);
    const stderr = 'stderr' in result ? result.stderr : '';
    expect('code' in result ? { code: result.code, last: stderr.split('\n').slice(-4).join('\n'), stdout: result.stdout.slice(-400) } : 0).toBe(0);
    expect(stderr).toContain('README line');
  });

  it('every model id named in the README’s code is served', async () => {
    const code = [...blocks('sh'), ...blocks('ts'), ...blocks('yaml')].map((block) => block.text).join('\n');
    const named = new Set<string>();
    for (const match of code.matchAll(/(?:"model"\s*:\s*"|model:\s*'|model=|\/v1beta\/models\/)([A-Za-z0-9._-]+)/g)) named.add(match[1] as string);
    named.delete('demo-model'); // created by the quick start itself
    expect(named.size).toBeGreaterThan(8);
    const served = await fetch(`${gateway.baseURL}/models`).then(async (response) => ((await response.json()) as { data: Array<{ id: string }> }).data.map((model) => model.id));
    const unknown = [...named].filter((id) => !served.includes(id));
    expect(unknown).toEqual([]);
  });
});
