import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { MOCK_AWS_CREDENTIALS, MOCK_BEDROCK_API_KEY, MOCK_BEDROCK_REGION, startMockBedrockUpstream, type MockBedrockUpstream } from '../../support/mock-bedrock-upstream.js';
import { anthropicDriver, geminiDriver, openAIDriver, type ClientDriver } from '../families/client-drivers.js';

/**
 * Bedrock channels serve every client family: each official SDK reaches the Converse mock (which verifies every
 * SigV4 signature and speaks AWS's binary event stream) through the gateway, streaming and tools included.
 */
let gateway: TestGateway;
let bedrock: MockBedrockUpstream;
let account: SeededAccount;
const MODEL = 'claude-on-bedrock';

beforeAll(async () => {
  bedrock = await startMockBedrockUpstream();
  gateway = await startTestGateway();
  await addRoutedModel(gateway, {
    model: MODEL,
    channel: {
      name: 'bedrock-up',
      type: 'bedrock',
      base_url: bedrock.url,
      credentials: { access_key_id: MOCK_AWS_CREDENTIALS.accessKeyId, secret_access_key: MOCK_AWS_CREDENTIALS.secretAccessKey, session_token: MOCK_AWS_CREDENTIALS.sessionToken },
      settings: { region: MOCK_BEDROCK_REGION, inference_profile: 'auto' },
      models: { [MODEL]: 'anthropic.claude-3-7-sonnet-20250219-v1:0' },
    },
  });
  account = await seedAccount(gateway, { balanceUsd: 20 });
});

afterAll(async () => {
  await gateway?.close();
  await bedrock?.close();
});

const drivers = (): ClientDriver[] => [openAIDriver(gateway.baseURL, account.key), anthropicDriver(gateway.url, account.key, 'x-api-key'), geminiDriver(gateway.url, account.key)];

describe.each(['openai', 'anthropic (x-api-key)', 'gemini'])('%s client → bedrock channel', (name) => {
  const driver = (): ClientDriver => drivers().find((candidate) => candidate.name === name)!;

  it('answers a plain request, signed with the session token, on the cross-region profile', async () => {
    expect(await driver().plain(MODEL, 'Say the word pelican')).toBe('Echo: Say the word pelican');
    const sent = bedrock.requests.at(-1)!;
    expect(sent.path).toBe('/model/us.anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse');
    expect(sent.headers['x-amz-security-token']).toBe(MOCK_AWS_CREDENTIALS.sessionToken);
  });

  it('streams from ConverseStream', async () => {
    const { text, deltas } = await driver().stream(MODEL, 'Tell me about the river otter in a few words');
    expect(text).toBe('Echo: Tell me about the river otter in a few words');
    expect(deltas).toBeGreaterThan(1);
    expect(bedrock.requests.at(-1)!.path).toMatch(/\/converse-stream$/);
  });

  it('completes a tool round trip (the call streamed, the result sent back as a toolResult)', async () => {
    const result = await driver().toolRoundTrip(MODEL);
    expect(result.toolName).toBe('get_weather');
    expect(result.args).toEqual({ location: 'Paris' });
    expect(result.final).toContain('Tool result received');
    const last = bedrock.requests.at(-1)!.body as { messages: Array<{ role: string; content: Array<Record<string, unknown>> }> };
    expect(last.messages.at(-1)!.content[0]).toHaveProperty('toolResult');
  });
});

describe('bedrock channels', () => {
  it('bill from the Converse usage', async () => {
    await flushWrites(gateway);
    const usage = await gateway.admin<{ data: Array<{ model: string; status: number; prompt_tokens: number; completion_tokens: number; cost_usd: number }> }>('GET', `/admin/usage?key_id=${account.keyId}&limit=50`);
    const rows = usage.body.data.filter((row) => row.model === MODEL && row.status === 200);
    expect(rows.length).toBeGreaterThanOrEqual(9);
    for (const row of rows) {
      expect(row.prompt_tokens).toBeGreaterThan(0);
      expect(row.completion_tokens).toBeGreaterThan(0);
      expect(row.cost_usd).toBeGreaterThan(0);
    }
  });

  it('pass the admin channel test, signed like any request', async () => {
    const channels = await gateway.admin<{ data: Array<{ id: string; name: string }> }>('GET', '/admin/channels?limit=50');
    const id = channels.body.data.find((channel) => channel.name === 'bedrock-up')!.id;
    const result = await gateway.admin<{ ok: boolean; outcome: string }>('POST', `/admin/channels/${id}/test`, {});
    expect(result.body).toMatchObject({ ok: true, outcome: 'success' });
  });

  it('take a Bedrock API key instead of IAM credentials', async () => {
    await addRoutedModel(gateway, { model: 'llama-on-bedrock', channel: { name: 'bedrock-key', type: 'bedrock', base_url: bedrock.url, api_key: MOCK_BEDROCK_API_KEY, settings: { region: MOCK_BEDROCK_REGION }, models: { 'llama-on-bedrock': 'meta.llama3-3-70b-instruct-v1:0' } } });
    expect(await openAIDriver(gateway.baseURL, account.key).plain('llama-on-bedrock', 'hello llama')).toBe('Echo: hello llama');
    expect(bedrock.requests.at(-1)!.headers.authorization).toBe(`Bearer ${MOCK_BEDROCK_API_KEY}`);
  });

  it('retry a throttled Converse call on the next channel', async () => {
    const second = await startMockBedrockUpstream();
    try {
      await addRoutedModel(gateway, { model: 'failover-bedrock', channel: { name: 'bedrock-a', type: 'bedrock', base_url: bedrock.url, priority: 10, api_key: `${MOCK_AWS_CREDENTIALS.accessKeyId}:${MOCK_AWS_CREDENTIALS.secretAccessKey}`, settings: { region: MOCK_BEDROCK_REGION }, models: { 'failover-bedrock': 'mistral.mistral-large-2407-v1:0' } } });
      await addRoutedModel(gateway, { model: 'failover-bedrock', channel: { name: 'bedrock-b', type: 'bedrock', base_url: second.url, priority: 1, api_key: `${MOCK_AWS_CREDENTIALS.accessKeyId}:${MOCK_AWS_CREDENTIALS.secretAccessKey}`, settings: { region: MOCK_BEDROCK_REGION }, models: { 'failover-bedrock': 'mistral.mistral-large-2407-v1:0' } } });
      bedrock.setFault({ kind: 'throttle', times: 1 });
      expect(await openAIDriver(gateway.baseURL, account.key).plain('failover-bedrock', 'still there?')).toBe('Echo: still there?');
      expect(second.requests).toHaveLength(1);
    } finally {
      bedrock.setFault(null);
      await second.close();
    }
  });

  it('clamp temperature to the 0..1 range of Bedrock models, with a warning', async () => {
    const response = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }], temperature: 1.5, seed: 7 }),
    });
    expect(response.status).toBe(200);
    const sent = bedrock.requests.at(-1)!.body as { system: unknown; inferenceConfig: unknown };
    expect(sent.system).toEqual([{ text: 'Be brief.' }]);
    expect(sent.inferenceConfig).toEqual({ temperature: 1 });
    expect(decodeURIComponent(response.headers.get('x-gateway-warnings') ?? '')).toMatch(/temperature was clamped.*seed was dropped/);
  });

  it('pass a Bedrock validation error to the caller as a 400 with its message', async () => {
    const response = await fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 500_000 }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { message: string } }).error.message).toContain('exceeds the model limit');
  });

  it('reject bad credentials and a missing region at channel creation', async () => {
    const missingRegion = await gateway.admin<{ error: { message: string; param?: string } }>('POST', '/admin/channels', { name: 'b1', type: 'bedrock', api_key: 'AKID:SECRET', models: ['x'] });
    expect(missingRegion.status).toBe(400);
    expect(missingRegion.body.error.message).toContain('settings.region');
    const badJson = await gateway.admin<{ error: { message: string } }>('POST', '/admin/channels', { name: 'b2', type: 'bedrock', credentials: { access_key_id: 'AKID' }, settings: { region: 'us-east-1' }, models: ['x'] });
    expect(badJson.status).toBe(400);
    expect(badJson.body.error.message).toContain('secret_access_key');
  });
});
