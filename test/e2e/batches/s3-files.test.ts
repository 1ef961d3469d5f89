/**
 * File bytes in an S3-compatible bucket (a real s3rver checking SigV4 signatures): /v1/files and a batch through the
 * official openai SDK, with each body found in the bucket, not the database; delete and the expiry sweep remove the
 * objects; quotas and other accounts as with the database store; a bucket refusing the gateway fails the upload and
 * lists nothing.
 */
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileStoreConfig, type S3StoreConfig } from '../../../src/config/file-store-config.js';
import { createS3FileStore } from '../../../src/file-stores/s3-file-store.js';
import type { Clock } from '../../../src/shared/clock.js';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { startS3Server, type TestS3Server } from '../../support/s3-server.js';

const MODEL = 's3-batch-gpt';

/** The wall clock, movable forward so files expire. */
class ForwardClock implements Clock {
  offset = 0;
  now(): number {
    return Date.now() + this.offset;
  }
}

let s3: TestS3Server;
let upstream: MockOpenAIUpstream;
let gateway: TestGateway;
let owner: SeededAccount;
let stranger: SeededAccount;
let client: OpenAI;
let bucket: ReturnType<typeof createS3FileStore>;
const clock = new ForwardClock();

const clientFor = (account: SeededAccount): OpenAI => new OpenAI({ apiKey: account.key, baseURL: gateway.baseURL, maxRetries: 0 });

/** The object the bucket keeps for a file, read straight from the bucket. */
async function objectOf(fileId: string): Promise<string | null> {
  return (await bucket.get(fileId))?.toString('utf8') ?? null;
}

beforeAll(async () => {
  [s3, upstream] = await Promise.all([startS3Server(), startMockOpenAIUpstream()]);
  gateway = await startTestGateway({
    clock,
    env: { ...s3.env, FILE_MAX_BYTES: '65536', FILE_ACCOUNT_QUOTA_BYTES: '100000', BATCH_POLL_MS: '20', BATCH_CONCURRENCY: '2', BATCH_PROVIDER_PASS_THROUGH: 'off' },
  });
  await addRoutedModel(gateway, { model: MODEL, channel: { name: 's3-openai-up', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { [MODEL]: 'gpt-4o-mini' } } });
  owner = await seedAccount(gateway, { balanceUsd: 20 });
  stranger = await seedAccount(gateway);
  client = clientFor(owner);
  bucket = createS3FileStore(readFileStoreConfig((name) => s3.env[name]) as S3StoreConfig);
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await bucket?.close();
  await Promise.all([s3?.close(), upstream?.close()]);
});

describe('files in an S3 bucket', () => {
  it('keeps uploads in the bucket, runs a batch from one, serves its results and deletes objects with their files', async () => {
    const lines = Array.from({ length: 5 }, (_, index) => JSON.stringify({ custom_id: `line-${index}`, method: 'POST', url: '/v1/chat/completions', body: { model: MODEL, messages: [{ role: 'user', content: `Say ${index}.` }], max_tokens: 20 } }));
    const input = `${lines.join('\n')}\n`;
    const uploaded = await client.files.create({ file: await toFile(Buffer.from(input), 'input.jsonl'), purpose: 'batch' });
    expect(uploaded).toMatchObject({ object: 'file', bytes: Buffer.byteLength(input), purpose: 'batch' });
    // The body is an object of the bucket under the configured prefix, and reads back through the SDK.
    expect(await objectOf(uploaded.id)).toBe(input);
    expect(await (await client.files.content(uploaded.id)).text()).toBe(input);

    const created = await client.batches.create({ input_file_id: uploaded.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    let batch = created;
    for (let attempt = 0; attempt < 600 && batch.status !== 'completed' && batch.status !== 'failed'; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      batch = await client.batches.retrieve(created.id);
    }
    expect(batch.status).toBe('completed');
    expect(batch.request_counts).toEqual({ total: 5, completed: 5, failed: 0 });
    const outputId = batch.output_file_id as string;
    const output = await (await client.files.content(outputId)).text();
    const results = output.trim().split('\n').map((line) => JSON.parse(line) as { custom_id: string; response: { status_code: number } });
    expect(results.map((result) => result.custom_id)).toEqual(lines.map((_, index) => `line-${index}`));
    expect(results.every((result) => result.response.status_code === 200)).toBe(true);
    // The gateway wrote the results to the bucket too.
    expect(await objectOf(outputId)).toBe(output);

    await client.files.delete(uploaded.id);
    expect(await objectOf(uploaded.id)).toBeNull();
    await expect(client.files.content(uploaded.id)).rejects.toMatchObject({ status: 404 });
  });

  it('streams a large file in and out whole', async () => {
    const body = Buffer.alloc(60_000);
    for (let index = 0; index < body.length; index += 1) body[index] = (index * 31 + 7) % 251;
    const file = await client.files.create({ file: await toFile(body, 'blob.bin'), purpose: 'user_data' });
    const downloaded = Buffer.from(await (await client.files.content(file.id)).arrayBuffer());
    expect(downloaded.equals(body)).toBe(true);
    await client.files.delete(file.id);
  });

  it('never lets another account read, download or delete a file', async () => {
    const mine = await client.files.create({ file: await toFile(Buffer.from('private words'), 'private.txt'), purpose: 'user_data' });
    const other = clientFor(stranger);
    await expect(other.files.retrieve(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.files.content(mine.id)).rejects.toMatchObject({ status: 404 });
    await expect(other.files.delete(mine.id)).rejects.toMatchObject({ status: 404 });
    // A batch naming another account's file finds no such file.
    await expect(other.batches.create({ input_file_id: mine.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toMatchObject({ status: 404 });
    expect(await objectOf(mine.id)).toBe('private words');
    await client.files.delete(mine.id);
  });

  it('counts bucket files against the account\'s quota', async () => {
    const account = await seedAccount(gateway);
    const quotaClient = clientFor(account);
    const first = await quotaClient.files.create({ file: await toFile(Buffer.alloc(50_000), 'a.bin'), purpose: 'user_data' });
    await quotaClient.files.create({ file: await toFile(Buffer.alloc(40_000), 'b.bin'), purpose: 'user_data' });
    await expect(quotaClient.files.create({ file: await toFile(Buffer.alloc(20_000), 'c.bin'), purpose: 'user_data' }))
      .rejects.toMatchObject({ status: 400, error: { code: 'file_quota_exceeded' } });
    await quotaClient.files.delete(first.id);
    await quotaClient.files.create({ file: await toFile(Buffer.alloc(20_000), 'c.bin'), purpose: 'user_data' });
  });

  it('removes expired files\' objects from the bucket in the sweep', async () => {
    const file = await client.files.create({ file: await toFile(Buffer.from('short-lived'), 'short.txt'), purpose: 'user_data', expires_after: { anchor: 'created_at', seconds: 3600 } });
    expect(await objectOf(file.id)).toBe('short-lived');
    clock.offset += 2 * 3600 * 1000;
    await expect(client.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
    let object: string | null = 'short-lived';
    for (let attempt = 0; attempt < 200 && object !== null; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      object = await objectOf(file.id);
    }
    expect(object).toBeNull();
  });
});

// The tests below start gateways of their own inside the test: on PostgreSQL each migrates a fresh schema first.
describe('a bucket added to a deployment that kept files in its database', () => {
  it('still serves and deletes the files kept before, and keeps new ones in the bucket', async () => {
    const before = await startTestGateway({ env: { BATCH_CONCURRENCY: '0' } });
    let after: TestGateway | undefined;
    try {
      const account = await seedAccount(before);
      const old = await new OpenAI({ apiKey: account.key, baseURL: before.baseURL, maxRetries: 0 }).files.create({ file: await toFile(Buffer.from('kept in the database'), 'old.txt'), purpose: 'user_data' });
      after = await startTestGateway({ env: { ...s3.env, DATABASE_URL: before.databaseUrl, BATCH_CONCURRENCY: '0' } });
      const client = new OpenAI({ apiKey: account.key, baseURL: after.baseURL, maxRetries: 0 });
      expect(await (await client.files.content(old.id)).text()).toBe('kept in the database');
      expect(await objectOf(old.id)).toBeNull();
      const fresh = await client.files.create({ file: await toFile(Buffer.from('kept in the bucket'), 'new.txt'), purpose: 'user_data' });
      expect(await objectOf(fresh.id)).toBe('kept in the bucket');
      await client.files.delete(old.id);
      await expect(client.files.content(old.id)).rejects.toMatchObject({ status: 404 });
      expect(await before.gateway.services.storage.fileContents.get(old.id)).toBeNull();
    } finally {
      await after?.close();
      await before.close();
    }
  }, 120_000);
});

describe('a bucket that refuses the gateway', () => {
  it('fails the upload and keeps no record of the file', async () => {
    const refused = await startTestGateway({ env: { ...s3.env, S3_SECRET_ACCESS_KEY: 'wrong-secret', BATCH_CONCURRENCY: '0' } });
    try {
      const account = await seedAccount(refused);
      const refusedClient = new OpenAI({ apiKey: account.key, baseURL: refused.baseURL, maxRetries: 0 });
      await expect(refusedClient.files.create({ file: await toFile(Buffer.from('x'), 'x.txt'), purpose: 'user_data' })).rejects.toMatchObject({ status: 500 });
      expect((await refusedClient.files.list()).data).toEqual([]);
      // The secret is never written to the log.
      expect(refused.logs.join('\n')).not.toContain('wrong-secret');
    } finally {
      await refused.close();
    }
  }, 120_000);
});
