import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, suiteDatabase, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

const KEYS = { openai: 'sk-upstream-test', anthropic: 'sk-ant-upstream-test', gemini: 'gemini-upstream-test' };
const PROMPT = 'FAMILYPROMPT3c9d';
const SYSTEM = 'FAMILYSYSTEM81e0';
const CITY = 'Toolcityq7z';

async function everythingStored(gateway: TestGateway): Promise<string> {
  if (gateway.databaseUrl.startsWith('sqlite:')) {
    const files = await readdir(gateway.dataDirectory);
    return (await Promise.all(files.map((file) => readFile(path.join(gateway.dataDirectory, file))))).map((content) => content.toString('latin1')).join('\n');
  }
  const client = new pg.Client({ connectionString: gateway.databaseUrl });
  await client.connect();
  try {
    const tables = await client.query<{ tablename: string }>("select tablename from pg_tables where schemaname = 'public'");
    return (await Promise.all(tables.rows.map(async ({ tablename }) => JSON.stringify((await client.query(`select * from "${tablename}"`)).rows)))).join('\n');
  } finally {
    await client.end();
  }
}

describe(`no secrets or prompt text at rest, whatever the family (${suiteDatabase()})`, () => {
  let gateway: TestGateway;
  let mocks: { openai: MockOpenAIUpstream; anthropic: MockAnthropicUpstream; gemini: MockGeminiUpstream };
  let account: SeededAccount;

  beforeAll(async () => {
    mocks = { openai: await startMockOpenAIUpstream(), anthropic: await startMockAnthropicUpstream(), gemini: await startMockGeminiUpstream() };
    gateway = await startTestGateway();
    await addRoutedModel(gateway, { model: 'm-openai', channel: { name: 'o', type: 'openai', base_url: mocks.openai.url, api_key: KEYS.openai, models: { 'm-openai': 'gpt-4o-mini' } } });
    await addRoutedModel(gateway, { model: 'm-anthropic', channel: { name: 'a', type: 'anthropic', base_url: mocks.anthropic.url, api_key: KEYS.anthropic, models: { 'm-anthropic': 'claude-sonnet-4-5' } } });
    await addRoutedModel(gateway, { model: 'm-gemini', channel: { name: 'g', type: 'gemini', base_url: mocks.gemini.url, api_key: KEYS.gemini, models: { 'm-gemini': 'gemini-2.5-flash' } } });
    account = await seedAccount(gateway, { balanceUsd: 20 });

    const anthropic = new Anthropic({ baseURL: gateway.url, apiKey: account.key, maxRetries: 0 });
    const gemini = new GoogleGenAI({ apiKey: account.key, httpOptions: { baseUrl: gateway.url } });
    const openai = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
    const weather: Anthropic.Tool = { name: 'get_weather', input_schema: { type: 'object', properties: { location: { type: 'string' } } } };
    for (const model of ['m-openai', 'm-anthropic', 'm-gemini']) {
      await anthropic.messages.stream({ model, max_tokens: 64, system: SYSTEM, tools: [weather], messages: [{ role: 'user', content: `What is the weather in ${CITY}? ${PROMPT}` }] }).finalMessage();
      await anthropic.messages.countTokens({ model, messages: [{ role: 'user', content: PROMPT }] });
      await gemini.models.generateContent({ model, contents: `${PROMPT} once more`, config: { systemInstruction: SYSTEM } });
      for await (const _chunk of await gemini.models.generateContentStream({ model, contents: `${PROMPT} streamed` })) {
        // drain
      }
      await openai.chat.completions.stream({ model, messages: [{ role: 'system', content: SYSTEM }, { role: 'user', content: PROMPT }] }).finalChatCompletion();
      await openai.responses.stream({ model, instructions: SYSTEM, input: `What is the weather in ${CITY}? ${PROMPT}`, store: false, tools: [{ type: 'function', name: 'get_weather', parameters: weather.input_schema, strict: false }] }).finalResponse();
    }
    mocks.anthropic.setFault({ kind: 'status', status: 500, times: 1, body: { type: 'error', error: { type: 'api_error', message: `boom ${PROMPT} ${KEYS.anthropic}` } } });
    await anthropic.messages.create({ model: 'm-anthropic', max_tokens: 16, messages: [{ role: 'user', content: PROMPT }] }).catch(() => undefined);
    await flushWrites(gateway);
  });

  afterAll(async () => {
    await gateway?.close();
    await Promise.all(Object.values(mocks ?? {}).map((mock) => mock.close()));
  });

  it('sent the markers to every upstream (the scan below means something)', () => {
    for (const mock of Object.values(mocks)) expect(mock.requests.some((request) => request.rawBody.includes(PROMPT))).toBe(true);
    expect(mocks.anthropic.requests.some((request) => request.rawBody.includes(SYSTEM))).toBe(true);
  });

  it('keeps none of them in the database', async () => {
    const stored = await everythingStored(gateway);
    expect(stored).toContain('m-gemini');
    for (const forbidden of [account.key, PROMPT, SYSTEM, CITY, ...Object.values(KEYS)]) {
      expect(stored.includes(forbidden), `database contains ${forbidden.slice(0, 10)}…`).toBe(false);
    }
  });

  it('keeps none of them in the logs', () => {
    const logs = gateway.logs.join('\n');
    for (const forbidden of [account.key, PROMPT, SYSTEM, CITY, ...Object.values(KEYS), ...Object.values(mocks).map((mock) => `127.0.0.1:${mock.port}`)]) {
      expect(logs.includes(forbidden), `logs contain ${forbidden.slice(0, 10)}…`).toBe(false);
    }
  });
});
