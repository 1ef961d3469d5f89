import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { openSqliteConnection } from '../../../src/storage/sqlite-connection.js';
import OpenAI from 'openai';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, suiteDatabase, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

const UPSTREAM_KEY = 'sk-upstream-test';
const PROMPT_MARKER = 'PROMPTMARKER7f3a';
const SYSTEM_MARKER = 'SYSTEMMARKER19bc';
const TOOL_MARKER = 'TOOLARGMARKER5e2d';

/** Every byte the gateway keeps: its database (SQLite files incl. WAL, or every PostgreSQL table as text). */
async function everythingStored(gateway: TestGateway): Promise<string> {
  if (gateway.databaseUrl.startsWith('sqlite:')) {
    const files = await readdir(gateway.dataDirectory);
    const contents = await Promise.all(files.map((file) => readFile(path.join(gateway.dataDirectory, file))));
    return contents.map((content) => content.toString('latin1')).join('\n');
  }
  const client = new pg.Client({ connectionString: gateway.databaseUrl });
  await client.connect();
  try {
    const tables = await client.query<{ tablename: string }>("select tablename from pg_tables where schemaname = 'public'");
    const dumps = await Promise.all(tables.rows.map(async ({ tablename }) => JSON.stringify((await client.query(`select * from "${tablename}"`)).rows)));
    return dumps.join('\n');
  } finally {
    await client.end();
  }
}

describe(`no secret or prompt text in logs or the database (${suiteDatabase()})`, () => {
  let gateway: TestGateway;
  let upstream: MockOpenAIUpstream;
  let account: SeededAccount;
  let brandKey: string;

  beforeAll(async () => {
    upstream = await startMockOpenAIUpstream({ apiKey: UPSTREAM_KEY });
    gateway = await startTestGateway();
    await addRoutedModel(gateway, { model: 'secret-model', channel: { name: 'up', type: 'openai', base_url: upstream.url, api_key: UPSTREAM_KEY, models: ['secret-model'] } });
    account = await seedAccount(gateway);
    brandKey = (await gateway.admin<{ key: string }>('POST', `/admin/accounts/${account.accountId}/keys`, { form: 'brand' })).body.key;

    const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
    const tools: OpenAI.Chat.Completions.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }];
    const messages: OpenAI.Chat.Completions.ChatCompletionMessageParam[] = [
      { role: 'system', content: `You are ${SYSTEM_MARKER}.` },
      { role: 'user', content: `What is the weather in ${TOOL_MARKER}? ${PROMPT_MARKER}` },
    ];
    await client.chat.completions.create({ model: 'secret-model', messages, tools });
    await client.chat.completions.stream({ model: 'secret-model', messages, tools }).finalChatCompletion();
    await client.chat.completions.create({ model: 'secret-model', messages: [{ role: 'user', content: `Echo ${PROMPT_MARKER} back` }] });
    for await (const _chunk of await client.chat.completions.create({ model: 'secret-model', stream: true, messages: [{ role: 'user', content: `Stream ${PROMPT_MARKER}` }] })) {
      // drain
    }
    upstream.setFault({ kind: 'status', status: 500, body: { error: { message: `failure mentioning ${PROMPT_MARKER} and ${UPSTREAM_KEY}` } }, times: 1 });
    await client.chat.completions.create({ model: 'secret-model', messages: [{ role: 'user', content: PROMPT_MARKER }] }).catch(() => undefined);
    upstream.setFault({ kind: 'status', status: 401, body: { error: { message: `Incorrect API key provided: ${UPSTREAM_KEY}` } }, times: 1 });
    await client.chat.completions.create({ model: 'secret-model', messages: [{ role: 'user', content: PROMPT_MARKER }] }).catch(() => undefined);
    await new OpenAI({ baseURL: gateway.baseURL, apiKey: brandKey, maxRetries: 0 }).chat.completions.create({ model: 'secret-model', messages: [{ role: 'user', content: PROMPT_MARKER }] });
    await fetch(`${gateway.baseURL}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${account.key}` }, body: `{"model": "secret-model", "messages": "${PROMPT_MARKER}` });
    await flushWrites(gateway);
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  it('made the calls it scans for (the markers really went through)', () => {
    expect(upstream.requests.some((request) => request.rawBody.includes(PROMPT_MARKER))).toBe(true);
    expect(upstream.requests.some((request) => request.rawBody.includes(TOOL_MARKER))).toBe(true);
  });

  it('keeps no key secret, upstream key or prompt, completion or tool-argument text in the database', async () => {
    const stored = await everythingStored(gateway);
    expect(stored.length).toBeGreaterThan(1000);
    expect(stored).toContain('secret-model');
    for (const forbidden of [account.key, account.key.slice(3), brandKey, UPSTREAM_KEY, PROMPT_MARKER, SYSTEM_MARKER, TOOL_MARKER, gateway.adminToken]) {
      expect(stored.includes(forbidden), `database contains ${forbidden.slice(0, 12)}…`).toBe(false);
    }
  });

  it('keeps none of them in the logs either', () => {
    const logs = gateway.logs.join('\n');
    expect(logs).toContain('upstream');
    for (const forbidden of [account.key, brandKey, UPSTREAM_KEY, PROMPT_MARKER, SYSTEM_MARKER, TOOL_MARKER, gateway.adminToken, upstream.origin]) {
      expect(logs.includes(forbidden), `logs contain ${forbidden.slice(0, 12)}…`).toBe(false);
    }
  });

  it('looks keys up by their SHA-256 hash', async () => {
    const digest = createHash('sha256').update(account.key).digest('hex');
    if (gateway.databaseUrl.startsWith('sqlite:')) {
      const database = openSqliteConnection(gateway.databaseUrl.slice('sqlite:'.length), { readOnly: true, mustExist: true });
      try {
        const tables = database.prepare("select name from sqlite_master where type = 'table'").all() as Array<{ name: string }>;
        const keyTable = tables.find((table) => /key/.test(table.name) && !/migration/.test(table.name));
        expect(keyTable).toBeDefined();
        const rows = database.prepare(`select * from "${keyTable!.name}"`).all();
        expect(JSON.stringify(rows, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))).toContain(digest);
      } finally {
        database.close();
      }
    } else {
      expect(await everythingStored(gateway)).toContain(digest);
    }
  });
});
