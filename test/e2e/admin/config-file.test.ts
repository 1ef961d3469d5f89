/**
 * gateway.yaml (GATEWAY_CONFIG) with `${ENV}` expansion, applied idempotently at every
 * start; the OPENAI_API_KEY provider shortcut.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, suiteDatabase, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { createThrowawayPostgresDatabase, type ThrowawayPostgresDatabase } from '../../support/postgres-test-database.js';
import { admin, chat, collectPages, expectError } from './helpers.js';

interface ChannelJson {
  id: string;
  name: string;
  type: string;
  base_url: string | null;
  models: Record<string, string>;
  priority: number;
  enabled: boolean;
}

interface ModelJson {
  id: string;
  pricing: Record<string, number | null>;
}

interface PlanJson {
  id: string;
  name: string;
  period: string;
  quota_usd: number;
  overage: { policy: string; limit_usd: number | null };
}

const UPSTREAM_KEY = 'sk-upstream-test';

let mock: MockOpenAIUpstream;
let directory: string;
let postgres: ThrowawayPostgresDatabase | null = null;
let databaseUrl: string;
const gateways: TestGateway[] = [];

function yamlFile(mockUrl: string, price = 0.15): string {
  return `# declarative configuration of the gateway
models:
  - id: yaml-gpt
    pricing:
      input_per_mtok: ${price}
      output_per_mtok: 0.6
      cached_input_per_mtok: 0.075
      per_web_search: 0.01
      per_file_search: 0.0025
  - id: yaml-sim
    pricing: { input_per_mtok: 0.000001, output_per_mtok: 0.000002 }
channels:
  - name: yaml-upstream
    type: openai-compatible
    base_url: ${mockUrl}
    api_key: \${YAML_UPSTREAM_KEY}
    models:
      yaml-gpt: gpt-4o-mini
    priority: 10
  - name: yaml-simulator
    type: simulator
    models: [yaml-sim]
plans:
  - name: yaml-basic
    period: month
    quota_usd: 5
    overage: { policy: limit, limit_usd: 1.5 }
`;
}

async function start(env: Record<string, string>): Promise<TestGateway> {
  const gateway = await startTestGateway({ env: { DATABASE_URL: databaseUrl, DATA_DIR: path.join(directory, 'data'), ...env } });
  gateways.push(gateway);
  return gateway;
}

async function snapshot(gateway: TestGateway): Promise<{ channels: ChannelJson[]; models: ModelJson[]; plans: PlanJson[] }> {
  const channels = (await collectPages<ChannelJson>(gateway, '/admin/channels', 200)).items;
  const models = (await collectPages<ModelJson>(gateway, '/admin/models', 200)).items;
  const plans = (await collectPages<PlanJson>(gateway, '/admin/plans', 200)).items;
  const byKey = <T>(key: (item: T) => string) => (a: T, b: T) => key(a).localeCompare(key(b));
  return {
    channels: channels.sort(byKey((item) => item.name)),
    models: models.sort(byKey((item) => item.id)),
    plans: plans.sort(byKey((item) => item.name)),
  };
}

beforeAll(async () => {
  mock = await startMockOpenAIUpstream();
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-yaml-'));
  if (suiteDatabase() === 'postgres') {
    postgres = await createThrowawayPostgresDatabase();
    databaseUrl = postgres.url;
  } else {
    databaseUrl = `sqlite:${path.join(directory, 'data', 'gateway.db')}`;
  }
});

afterAll(async () => {
  for (const gateway of gateways) await gateway.close();
  await mock?.close();
  await postgres?.drop();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

describe('gateway.yaml', () => {
  let firstState: Awaited<ReturnType<typeof snapshot>>;
  let configFile: string;

  it('creates the declared channels, models and plans, with ${ENV} expanded', async () => {
    configFile = path.join(directory, 'gateway.yaml');
    await writeFile(configFile, yamlFile(mock.url));
    const gateway = await start({ GATEWAY_CONFIG: configFile, YAML_UPSTREAM_KEY: UPSTREAM_KEY });

    const state = await snapshot(gateway);
    const upstream = state.channels.find((channel) => channel.name === 'yaml-upstream');
    expect(upstream).toMatchObject({ type: 'openai-compatible', base_url: mock.url, models: { 'yaml-gpt': 'gpt-4o-mini' }, priority: 10, enabled: true });
    expect(state.channels.find((channel) => channel.name === 'yaml-simulator')).toMatchObject({ type: 'simulator' });
    const gpt = state.models.find((model) => model.id === 'yaml-gpt');
    expect(gpt?.pricing).toMatchObject({ input_per_mtok: 0.15, output_per_mtok: 0.6, cached_input_per_mtok: 0.075, per_web_search: 0.01, per_file_search: 0.0025, per_web_fetch: null });
    expect(state.models.find((model) => model.id === 'yaml-sim')?.pricing).toMatchObject({ input_per_mtok: 0.000001, output_per_mtok: 0.000002 });
    expect(state.plans.find((plan) => plan.name === 'yaml-basic')).toMatchObject({ period: 'month', quota_usd: 5, overage: { policy: 'limit', limit_usd: 1.5 } });

    // The expanded secret is stored, used upstream, and never shown.
    const channels = await admin(gateway, 'GET', '/admin/channels?limit=200');
    expect(channels.text).not.toContain('${YAML_UPSTREAM_KEY}');
    const seeded = await seedAccount(gateway, { balanceUsd: 5, email: 'yaml-user@example.com' });
    const before = mock.requests.length;
    const sdk = new OpenAI({ baseURL: gateway.baseURL, apiKey: seeded.key, maxRetries: 0 });
    const completion = await sdk.chat.completions.create({ model: 'yaml-gpt', messages: [{ role: 'user', content: 'Hello from the yaml channel' }] });
    expect(completion.choices[0]?.message.content ?? '').not.toBe('');
    const forwarded = mock.requests.slice(before).find((request) => request.path === '/v1/chat/completions');
    expect(forwarded?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect((forwarded?.body as { model?: string } | undefined)?.model).toBe('gpt-4o-mini');
    expect((await chat(gateway, seeded.key, 'yaml-sim')).status).toBe(200);

    // Something created through the admin API lives in the database next to the file's entities.
    expect((await admin(gateway, 'POST', '/admin/models', { id: 'admin-made-model', pricing: { input_per_mtok: 3 } })).status).toBe(201);
    firstState = await snapshot(gateway);
    await gateway.close();
  });

  it('a restart with the same file on the same database gives the same state, without duplicates', async () => {
    const gateway = await start({ GATEWAY_CONFIG: configFile, YAML_UPSTREAM_KEY: UPSTREAM_KEY });
    const state = await snapshot(gateway);
    const strip = (items: Array<Record<string, unknown>>) => items.map(({ updated_at: _updated, ...rest }) => rest);
    expect(strip(state.channels as unknown as Array<Record<string, unknown>>)).toEqual(strip(firstState.channels as unknown as Array<Record<string, unknown>>));
    expect(strip(state.models as unknown as Array<Record<string, unknown>>)).toEqual(strip(firstState.models as unknown as Array<Record<string, unknown>>));
    expect(strip(state.plans as unknown as Array<Record<string, unknown>>)).toEqual(strip(firstState.plans as unknown as Array<Record<string, unknown>>));
    expect(state.channels.filter((channel) => channel.name === 'yaml-upstream')).toHaveLength(1);
    expect(state.plans.filter((plan) => plan.name === 'yaml-basic')).toHaveLength(1);
    expect(state.models.map((model) => model.id)).toContain('admin-made-model');

    // The account and key made before the restart still work through the file's channel.
    const account = (await admin<{ data: Array<{ id: string; email: string }> }>(gateway, 'GET', '/admin/accounts?limit=200')).body.data.find((item) => item.email === 'yaml-user@example.com');
    expect(account).toBeDefined();
    const key = await admin<{ key: string }>(gateway, 'POST', `/admin/accounts/${account?.id ?? ''}/keys`, {});
    expect((await chat(gateway, key.body.key, 'yaml-gpt')).status).toBe(200);
    await gateway.close();
  });

  it('a changed file updates the entities it names at the next start', async () => {
    await writeFile(configFile, yamlFile(mock.url, 0.2));
    const gateway = await start({ GATEWAY_CONFIG: configFile, YAML_UPSTREAM_KEY: UPSTREAM_KEY });
    const model = await admin<ModelJson>(gateway, 'GET', '/admin/models/yaml-gpt');
    expect(model.body.pricing.input_per_mtok).toBe(0.2);
    const state = await snapshot(gateway);
    expect(state.channels.map((channel) => channel.id).sort()).toEqual(firstState.channels.map((channel) => channel.id).sort());
    await gateway.close();
  });

  it('a ${VAR} that is not set stops the start with an error naming it', async () => {
    const broken = path.join(directory, 'broken.yaml');
    await writeFile(broken, `channels:\n  - name: broken\n    type: openai\n    api_key: \${UNIGATE_TEST_UNSET_SECRET}\n    models: [gpt-4o]\n`);
    await expect(startTestGateway({ env: { GATEWAY_CONFIG: broken, DATABASE_URL: databaseUrl, DATA_DIR: path.join(directory, 'data') } }))
      .rejects.toThrow(/UNIGATE_TEST_UNSET_SECRET/);
  });

  it('an invalid entry stops the start with an error naming the entry and field', async () => {
    const invalid = path.join(directory, 'invalid.yaml');
    await writeFile(invalid, 'channels:\n  - name: no-key\n    type: openai\n    models: [gpt-4o]\n');
    await expect(startTestGateway({ env: { GATEWAY_CONFIG: invalid, DATABASE_URL: databaseUrl, DATA_DIR: path.join(directory, 'data') } }))
      .rejects.toThrow(/channels\[0\].*api_key/);
  });

  it('a channel whose base_url carries credentials stops the start, naming the entry and saying where they go', async () => {
    const withCredentials = path.join(directory, 'credentials.yaml');
    await writeFile(withCredentials, 'channels:\n  - name: creds\n    type: openai-compatible\n    base_url: https://user:pw-in-url@llm.example.com/v1\n    api_key: sk-x-123456789\n    models: [m]\n');
    await expect(startTestGateway({ env: { GATEWAY_CONFIG: withCredentials, DATABASE_URL: databaseUrl, DATA_DIR: path.join(directory, 'data') } }))
      .rejects.toThrow(/channels\[0\].*base_url.*api_key/);
    await expect(startTestGateway({ env: { OPENAI_API_KEY: UPSTREAM_KEY, OPENAI_BASE_URL: 'https://user:pw-in-url@llm.example.com/v1', DATABASE_URL: databaseUrl, DATA_DIR: path.join(directory, 'data') } }))
      .rejects.toThrow(/OPENAI_BASE_URL must not carry a user name or password/);
  });
});

describe('provider shortcut', () => {
  it('OPENAI_API_KEY + OPENAI_BASE_URL bring channel env-openai serving the bundled catalog, and a chat call reaches the upstream', async () => {
    const gateway = await startTestGateway({ env: { OPENAI_API_KEY: UPSTREAM_KEY, OPENAI_BASE_URL: mock.url } });
    gateways.push(gateway);
    const channels = await admin<{ data: ChannelJson[] }>(gateway, 'GET', '/admin/channels');
    const channel = channels.body.data.find((item) => item.name === 'env-openai');
    expect(channel).toMatchObject({ type: 'openai', base_url: mock.url, enabled: true });
    expect(channel?.models).toEqual({ '*': '' });
    expect(channels.text).not.toContain(UPSTREAM_KEY);
    const model = await admin<ModelJson & { price_source: string }>(gateway, 'GET', '/admin/models/gpt-4o-mini');
    expect(model.status).toBe(200);
    expect(model.body.pricing.input_per_mtok).toBe(0.15);
    expect(model.body.price_source).toBe('bundled');

    const seeded = await seedAccount(gateway, { balanceUsd: 5 });
    const before = mock.requests.length;
    const sdk = new OpenAI({ baseURL: gateway.baseURL, apiKey: seeded.key, maxRetries: 0 });
    const completion = await sdk.chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello through the shortcut' }] });
    expect(completion.object).toBe('chat.completion');
    expect(completion.usage?.total_tokens ?? 0).toBeGreaterThan(0);
    const forwarded = mock.requests.slice(before).filter((request) => request.path === '/v1/chat/completions');
    expect(forwarded).toHaveLength(1);
    expect(forwarded[0]?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect(JSON.stringify(forwarded[0]?.body)).toContain('Hello through the shortcut');

    // The gateway key is not what reaches the upstream.
    expect(JSON.stringify(forwarded[0]?.headers)).not.toContain(seeded.key);
    expectError(await chat(gateway, seeded.key, 'not-a-standard-model'), { status: 400 });
  });
});
