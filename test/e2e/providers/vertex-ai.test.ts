import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { MOCK_VERTEX_PROJECT, startMockVertexUpstream, type MockVertexUpstream } from '../../support/mock-vertex-upstream.js';
import { anthropicDriver, geminiDriver, openAIDriver, type ClientDriver } from '../families/client-drivers.js';

/**
 * Vertex AI channels serve Gemini and Claude models to every client family, with a service-account key turned into
 * OAuth access tokens against the mock's token endpoint (named by the key's token_uri).
 */
let gateway: TestGateway;
let vertex: MockVertexUpstream;
let account: SeededAccount;
const GEMINI = 'gemini-on-vertex';
const CLAUDE = 'claude-on-vertex';

beforeAll(async () => {
  vertex = await startMockVertexUpstream({ location: 'us-east5' });
  gateway = await startTestGateway();
  const channel = { type: 'vertex-ai', base_url: vertex.url, credentials: vertex.serviceAccount, settings: { location: 'us-east5' } };
  await addRoutedModel(gateway, { model: GEMINI, channel: { ...channel, name: 'vertex-gemini', models: { [GEMINI]: 'gemini-2.5-flash' } } });
  await addRoutedModel(gateway, { model: CLAUDE, channel: { ...channel, name: 'vertex-claude', models: { [CLAUDE]: 'claude-sonnet-4-5@20250929' } } });
  account = await seedAccount(gateway, { balanceUsd: 20 });
});

afterAll(async () => {
  await gateway?.close();
  await vertex?.close();
});

const drivers = (): ClientDriver[] => [openAIDriver(gateway.baseURL, account.key), anthropicDriver(gateway.url, account.key, 'x-api-key'), geminiDriver(gateway.url, account.key)];
const EXPECTED_PATH: Record<string, RegExp> = {
  [GEMINI]: new RegExp(`^/v1/projects/${MOCK_VERTEX_PROJECT}/locations/us-east5/publishers/google/models/gemini-2\\.5-flash:(generateContent|streamGenerateContent)$`),
  [CLAUDE]: new RegExp(`^/v1/projects/${MOCK_VERTEX_PROJECT}/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5%4020250929:(rawPredict|streamRawPredict)$`),
};

describe.each(['openai', 'anthropic (x-api-key)', 'gemini'])('%s client → vertex-ai channel', (name) => {
  const driver = (): ClientDriver => drivers().find((candidate) => candidate.name === name)!;

  describe.each([GEMINI, CLAUDE])('%s', (model) => {
    it('answers a plain request', async () => {
      expect(await driver().plain(model, 'Say the word pelican')).toContain('pelican');
      const sent = vertex.requests.at(-1)!;
      expect(sent.path).toMatch(EXPECTED_PATH[model]!);
      expect(sent.headers.authorization).toMatch(/^Bearer ya29\.mock-\d+$/);
    });

    it('streams', async () => {
      const { text, deltas } = await driver().stream(model, 'Tell me about the river otter in a few words');
      expect(text).toContain('otter');
      expect(deltas).toBeGreaterThan(1);
      expect(vertex.requests.at(-1)!.path).toMatch(/:(streamGenerateContent|streamRawPredict)$/);
    });

    it('completes a tool round trip', async () => {
      const result = await driver().toolRoundTrip(model);
      expect(result.toolName).toBe('get_weather');
      expect(typeof result.args.location).toBe('string');
      expect(result.final.length).toBeGreaterThan(0);
    });
  });
});

describe('vertex-ai channels', () => {
  it('fetched one token for all of that (cached, shared by both channels of the key)', () => {
    expect(vertex.tokenRequests).toBe(1);
  });

  it('pass the admin channel test with a token', async () => {
    const channels = await gateway.admin<{ data: Array<{ id: string; name: string }> }>('GET', '/admin/channels?limit=50');
    const id = channels.body.data.find((channel) => channel.name === 'vertex-claude')!.id;
    const result = await gateway.admin<{ ok: boolean; outcome: string }>('POST', `/admin/channels/${id}/test`, {});
    expect(result.body).toMatchObject({ ok: true, outcome: 'success' });
  });

  it('send Claude the Vertex body: anthropic_version, no model', () => {
    const claude = vertex.requests.filter((request) => request.path.includes('/publishers/anthropic/')).at(-1)!;
    expect(claude.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16' });
    expect(claude.body).not.toHaveProperty('model');
  });

  it('renew a token Vertex refuses, once, and answer', async () => {
    const before = vertex.tokenRequests;
    vertex.revokeTokens();
    const answers = await Promise.all([1, 2, 3].map((n) => openAIDriver(gateway.baseURL, account.key).plain(GEMINI, `again ${n}`)));
    expect(answers.every((text) => text.includes('again'))).toBe(true);
    expect(vertex.tokenRequests).toBe(before + 1);
  });

  it('bill from the usage Vertex reports', async () => {
    await flushWrites(gateway);
    const usage = await gateway.admin<{ data: Array<{ model: string; status: number; prompt_tokens: number; completion_tokens: number; cost_usd: number }> }>('GET', `/admin/usage?key_id=${account.keyId}&limit=100`);
    for (const model of [GEMINI, CLAUDE]) {
      const rows = usage.body.data.filter((row) => row.model === model && row.status === 200);
      expect(rows.length).toBeGreaterThanOrEqual(9);
      expect(rows.every((row) => row.prompt_tokens > 0 && row.completion_tokens > 0 && row.cost_usd > 0)).toBe(true);
    }
  });

  it('flag a service account the token endpoint refuses, and answer 502 without leaking it', async () => {
    const other = await startMockVertexUpstream({ location: 'us-east5' });
    try {
      const { channelId } = await addRoutedModel(gateway, { model: 'vertex-refused', channel: { name: 'vertex-refused', type: 'vertex-ai', base_url: other.url, credentials: other.serviceAccount, settings: { location: 'us-east5' }, models: { 'vertex-refused': 'gemini-2.5-flash' } } });
      other.setFault({ kind: 'invalid-grant' });
      const response = await fetch(`${gateway.baseURL}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'vertex-refused', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.status).toBe(502);
      const text = await response.text();
      expect(text).not.toContain('PRIVATE KEY');
      expect(other.requests).toHaveLength(0);
      const health = await gateway.admin<{ rejected_keys: Array<{ index: number; reason: string }> }>('GET', `/admin/channels/${channelId}/health`);
      expect(health.body.rejected_keys).toEqual([expect.objectContaining({ index: 0, reason: 'credential' })]);
    } finally {
      await other.close();
    }
  });

  it('reject a key that is not a service account at channel creation', async () => {
    const notJson = await gateway.admin<{ error: { message: string } }>('POST', '/admin/channels', { name: 'v1', type: 'vertex-ai', api_key: 'AIza-not-a-service-account', models: ['x'] });
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.message).toContain('service-account');
    const badKey = await gateway.admin<{ error: { message: string } }>('POST', '/admin/channels', { name: 'v2', type: 'vertex-ai', credentials: { ...vertex.serviceAccount, private_key: 'nope' }, models: ['x'] });
    expect(badKey.status).toBe(400);
    expect(badKey.body.error.message).toContain('private_key');
  });
});
