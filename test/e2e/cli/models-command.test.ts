/** `unigate models list|search|show|diff`, run as the operator runs it, against the gateway's own database. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { assertBuilt, cleanEnv, REPO_ROOT, runCommand } from './cli-process.js';

let upstream: MockOpenAIUpstream;
let gateway: TestGateway;

async function models(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runCommand(['models', ...args], REPO_ROOT, cleanEnv({ DATABASE_URL: gateway.databaseUrl, DATA_DIR: gateway.dataDirectory }));
}

beforeAll(async () => {
  assertBuilt();
  upstream = await startMockOpenAIUpstream();
  gateway = await startTestGateway({ database: 'sqlite', env: { OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url } });
  expect((await gateway.admin('PATCH', '/admin/models/gpt-4o-mini', { pricing: { input_per_mtok: 0.2 } })).status).toBe(200);
  expect((await gateway.admin('POST', '/admin/models', { id: 'house-model', pricing: { input_per_mtok: 1, output_per_mtok: 2 } })).status).toBe(201);
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe('unigate models', () => {
  it('list shows the served models with limits, capabilities and prices; --all the whole bundled catalog', async () => {
    const served = await models('list', '--json');
    expect(served.code).toBe(0);
    const rows = JSON.parse(served.stdout) as Array<{ id: string; kind: string; price_source: string; pricing: Record<string, number | null> }>;
    expect(rows.length).toBeGreaterThan(50);
    expect(rows.find((row) => row.id === 'gpt-4o-mini')).toMatchObject({ price_source: 'operator', pricing: { input_per_mtok: 0.2, output_per_mtok: 0.6 } });
    expect(rows.find((row) => row.id === 'gpt-4o')).toMatchObject({ price_source: 'bundled', pricing: { input_per_mtok: 2.5 } });
    expect(rows.some((row) => row.id.startsWith('claude'))).toBe(false);

    const anthropic = await models('list', '--all', '--provider', 'anthropic', '--kind', 'chat');
    expect(anthropic.code).toBe(0);
    expect(anthropic.stdout.split('\n')[0]).toMatch(/^id\s+kind\s+provider\s+context\s+output\s+capabilities\s+input\/M/);
    expect(anthropic.stdout).toMatch(/claude-sonnet-4-5\s+chat\s+anthropic\s+200k\s+64k\s+tools,vision,json,reasoning\s+\$3\s+\$15\s+\$0\.3\s+\$3\.75\s+\$0\.01\/search tiers>200k\s+bundled/);
  });

  it("list shows the overlay's facts: gemini-embedding-001 takes 2,048 tokens, tts-1 is priced per character, DALL·E per image", async () => {
    const embeddings = await models('list', '--all', '--provider', 'google', '--kind', 'embedding');
    expect(embeddings.stdout).toMatch(/gemini-embedding-001\s+embedding\s+google\s+2k\s/);
    const listed = JSON.parse((await models('list', '--all', '--provider', 'openai', '--json')).stdout) as Array<{ id: string; pricing: Record<string, unknown> }>;
    expect(listed.find((row) => row.id === 'tts-1')).toMatchObject({ pricing: { per_mchar: 15 } });
    expect(listed.find((row) => row.id === 'dall-e-3')?.pricing.per_image_by_size).toMatchObject({ 'hd 1024x1792': 0.12 });
  });

  it('search finds models by id or alias; show prints one with its tiers, aliases and channels', async () => {
    const found = await models('search', 'embedding', '--json');
    expect((JSON.parse(found.stdout) as Array<{ id: string }>).map((row) => row.id)).toEqual(expect.arrayContaining(['text-embedding-3-small', 'text-embedding-3-large', 'gemini-embedding-001']));
    const shown = await models('show', 'claude-sonnet-4-5-20250929');
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('claude-sonnet-4-5 (asked as claude-sonnet-4-5-20250929)');
    expect(shown.stdout).toMatch(/above 200000 input tokens: input \$6, output \$22\.5/);
    // Anthropic's Message Batches bill half the input and output prices.
    expect(shown.stdout).toMatch(/batch input\s+\$1\.5 per million tokens/);
    expect(shown.stdout).toMatch(/batch output\s+\$7\.5 per million tokens/);
    expect(shown.stdout).toMatch(/prices from\s+bundled data \(@pydantic\/genai-prices \d+\.\d+\.\d+\)/);
    const routed = await models('show', 'gpt-4o', '--json');
    expect(JSON.parse(routed.stdout)).toMatchObject({ id: 'gpt-4o', channels: [{ channel: 'env-openai', upstream_model: 'gpt-4o' }] });
    const missing = await models('show', 'no-such-model');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no model 'no-such-model'");
  });

  it("diff compares the operator's records with the bundled catalog", async () => {
    const text = await models('diff');
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('gpt-4o-mini: overrides input_per_mtok 0.15 -> 0.2');
    // The PATCH of the bundled model copied its batch prices into the record: they match the catalog's.
    expect(text.stdout).not.toContain('batch_');
    expect(text.stdout).toContain('house-model: operator only');
    const json = JSON.parse((await models('diff', '--json')).stdout) as { bundled_version: string; models: Array<{ id: string; status: string }> };
    expect(json.models).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'gpt-4o-mini', status: 'overrides' }), expect.objectContaining({ id: 'house-model', status: 'operator-only' })]));
  });
});
