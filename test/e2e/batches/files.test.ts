/**
 * /v1/files through the official openai SDK: upload (multipart, every purpose), list by cursor, retrieve, content,
 * delete; expiry, size limit and per-account quota; and no account reaching another's files.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';

let gateway: TestGateway;
let owner: SeededAccount;
let stranger: SeededAccount;
let client: OpenAI;
let strangerClient: OpenAI;

const clientFor = (account: SeededAccount): OpenAI => new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });

beforeAll(async () => {
  gateway = await startTestGateway({ env: { FILE_MAX_BYTES: '4096', FILE_ACCOUNT_QUOTA_BYTES: '10000', BATCH_CONCURRENCY: '0' } });
  owner = await seedAccount(gateway);
  stranger = await seedAccount(gateway);
  client = clientFor(owner);
  strangerClient = clientFor(stranger);
}, 60_000);

afterAll(async () => {
  await gateway?.close();
});

describe('files', () => {
  it('uploads, lists, retrieves, downloads and deletes a file as the SDK expects', async () => {
    const text = '{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{}}\n';
    const created = await client.files.create({ file: await toFile(Buffer.from(text), 'input.jsonl'), purpose: 'batch' });
    expect(created).toMatchObject({ object: 'file', bytes: Buffer.byteLength(text), filename: 'input.jsonl', purpose: 'batch', status: 'processed' });
    expect(created.id).toMatch(/^file_/);
    // Batch files expire after thirty days unless told otherwise.
    expect(created.expires_at).toBe(created.created_at + 30 * 86_400);

    const retrieved = await client.files.retrieve(created.id);
    expect(retrieved).toEqual(created);
    const content = await client.files.content(created.id);
    expect(await content.text()).toBe(text);

    const other = await client.files.create({ file: await toFile(Buffer.from('hello'), 'notes.txt'), purpose: 'user_data', expires_after: { anchor: 'created_at', seconds: 3600 } });
    expect(other.expires_at).toBe(other.created_at + 3600);
    const third = await client.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'assistants' });
    expect(third.expires_at).toBeUndefined();

    // Cursor pagination, newest first: the SDK follows `has_more` and the last id.
    const ids: string[] = [];
    for await (const file of client.files.list({ limit: 1 })) ids.push(file.id);
    expect(ids).toEqual([third.id, other.id, created.id]);
    const ascending = await client.files.list({ order: 'asc', limit: 2 });
    expect(ascending.data.map((file) => file.id)).toEqual([created.id, other.id]);
    expect(ascending.has_more).toBe(true);
    const batchOnly = await client.files.list({ purpose: 'batch' });
    expect(batchOnly.data.map((file) => file.id)).toEqual([created.id]);

    const deleted = await client.files.delete(other.id);
    expect(deleted).toEqual({ id: other.id, object: 'file', deleted: true });
    await expect(client.files.retrieve(other.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.files.delete(other.id)).rejects.toMatchObject({ status: 404 });
  });

  it('never shows one account\'s file to another', async () => {
    const mine = await client.files.create({ file: await toFile(Buffer.from('secret'), 'secret.txt'), purpose: 'user_data' });
    await expect(strangerClient.files.retrieve(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(strangerClient.files.content(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(strangerClient.files.delete(mine.id)).rejects.toMatchObject({ status: 404 });
    const theirs = await strangerClient.files.list();
    expect(theirs.data.map((file) => file.id)).not.toContain(mine.id);
    // A cursor naming another account's file lists nothing.
    expect((await strangerClient.files.list({ after: mine.id })).data).toEqual([]);
    expect(await (await client.files.content(mine.id)).text()).toBe('secret');
  });

  it('refuses bad uploads with the error object: purpose, size, quota, expiry, no key', async () => {
    await expect(client.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'nonsense' as 'batch' })).rejects.toMatchObject({ status: 400, error: { param: 'purpose' } });
    await expect(client.files.create({ file: await toFile(Buffer.alloc(4097), 'big.bin'), purpose: 'user_data' })).rejects.toMatchObject({ status: 413 });
    await expect(client.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'user_data', expires_after: { anchor: 'created_at', seconds: 60 } }))
      .rejects.toMatchObject({ status: 400, error: { param: 'expires_after.seconds' } });
    const anonymous = new OpenAI({ apiKey: 'sk-wrong', baseURL: gateway.baseURL, maxRetries: 0 });
    await expect(anonymous.files.list()).rejects.toMatchObject({ status: 401 });

    // The quota counts live files: 4000-byte files fill 10000 bytes after two (the earlier tests kept a few bytes).
    const quotaAccount = await seedAccount(gateway);
    const quotaClient = clientFor(quotaAccount);
    const first = await quotaClient.files.create({ file: await toFile(Buffer.alloc(4000), 'a.bin'), purpose: 'user_data' });
    await quotaClient.files.create({ file: await toFile(Buffer.alloc(4000), 'b.bin'), purpose: 'user_data' });
    await expect(quotaClient.files.create({ file: await toFile(Buffer.alloc(4000), 'c.bin'), purpose: 'user_data' }))
      .rejects.toMatchObject({ status: 400, error: { code: 'file_quota_exceeded' } });
    await quotaClient.files.delete(first.id);
    await quotaClient.files.create({ file: await toFile(Buffer.alloc(4000), 'c.bin'), purpose: 'user_data' });
  });
});
