import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { MOCK_AWS_CREDENTIALS, startMockBedrockUpstream, type MockBedrockUpstream } from '../../support/mock-bedrock-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { startMockVertexUpstream, type MockVertexUpstream } from '../../support/mock-vertex-upstream.js';
import { openAIDriver } from '../families/client-drivers.js';

/** gateway.yaml declares Bedrock, Vertex AI and preset channels, their secrets from the environment. */
let directory: string;
let bedrock: MockBedrockUpstream;
let vertex: MockVertexUpstream;
let openai: MockOpenAIUpstream;
let gateway: TestGateway;
let account: SeededAccount;

beforeAll(async () => {
  [bedrock, vertex, openai] = await Promise.all([startMockBedrockUpstream(), startMockVertexUpstream({ location: 'global' }), startMockOpenAIUpstream()]);
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-providers-yaml-'));
  const file = path.join(directory, 'gateway.yaml');
  await writeFile(file, `models:
  - id: yaml-claude
    pricing: { input_per_mtok: 3, output_per_mtok: 15 }
  - id: yaml-gemini
    pricing: { input_per_mtok: 1.25, output_per_mtok: 10 }
  - id: yaml-deepseek
    pricing: { input_per_mtok: 0.55, output_per_mtok: 2.19 }
channels:
  - name: yaml-bedrock
    type: bedrock
    base_url: ${bedrock.url}
    credentials: { access_key_id: "\${AWS_ACCESS_KEY_ID}", secret_access_key: "\${AWS_SECRET_ACCESS_KEY}" }
    settings: { region: us-east-1 }
    models: { yaml-claude: "anthropic.claude-3-haiku-20240307-v1:0" }
  - name: yaml-vertex
    type: vertex-ai
    base_url: ${vertex.url}
    api_key: \${VERTEX_SERVICE_ACCOUNT_JSON}
    models: { yaml-gemini: gemini-2.5-flash }
  - name: yaml-deepseek
    type: deepseek
    base_url: ${openai.url}
    api_key: \${DEEPSEEK_API_KEY}
    models: { yaml-deepseek: gpt-4o-mini }
`);
  gateway = await startTestGateway({
    env: {
      GATEWAY_CONFIG: file,
      AWS_ACCESS_KEY_ID: MOCK_AWS_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: MOCK_AWS_CREDENTIALS.secretAccessKey,
      VERTEX_SERVICE_ACCOUNT_JSON: JSON.stringify(vertex.serviceAccount, null, 2),
      DEEPSEEK_API_KEY: 'sk-upstream-test',
    },
  });
  account = await seedAccount(gateway, { balanceUsd: 5 });
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([bedrock?.close(), vertex?.close(), openai?.close()]);
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe('provider channels from gateway.yaml', () => {
  it('are created with their types, secrets kept out of the answers', async () => {
    const channels = await gateway.admin<{ data: Array<{ name: string; type: string; api_key_hints: string[] }> }>('GET', '/admin/channels?limit=50');
    const byName = Object.fromEntries(channels.body.data.map((channel) => [channel.name, channel]));
    expect(byName['yaml-bedrock']?.type).toBe('bedrock');
    expect(byName['yaml-vertex']?.type).toBe('vertex-ai');
    expect(byName['yaml-deepseek']?.type).toBe('deepseek');
    expect(JSON.stringify(channels.body)).not.toContain('PRIVATE KEY');
    expect(JSON.stringify(channels.body)).not.toContain(MOCK_AWS_CREDENTIALS.secretAccessKey);
  });

  it('serve their models', async () => {
    const client = openAIDriver(gateway.baseURL, account.key);
    expect(await client.plain('yaml-claude', 'from yaml')).toBe('Echo: from yaml');
    expect(await client.plain('yaml-gemini', 'say pelican')).toContain('pelican');
    expect(await client.plain('yaml-deepseek', 'say pelican')).toContain('pelican');
  });
});
