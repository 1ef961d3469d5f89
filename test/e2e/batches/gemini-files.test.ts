/**
 * Gemini's Files API and file-input batches through the official @google/genai SDK: `files.upload` (Google's
 * resumable protocol, several chunks for a large file), `files.get`, `files.list`, `files.download`, `files.delete`;
 * a batch whose requests are in an uploaded file (`src: 'files/…'`) run on a Gemini and a translated OpenAI model, its
 * results a file (`dest.fileName`) downloaded with the SDK and matched line by line by key; other accounts' files; and
 * the bytes in an S3 bucket when one is configured.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { GoogleGenAI, JobState, type BatchJob } from '@google/genai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockGeminiUpstream, type MockGeminiUpstream } from '../../support/mock-gemini-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { startS3Server, type TestS3Server } from '../../support/s3-server.js';

const MODELS = { gemini: 'gf-gemini', openai: 'gf-gpt' } as const;
const ENDED: readonly string[] = [JobState.JOB_STATE_SUCCEEDED, JobState.JOB_STATE_FAILED, JobState.JOB_STATE_CANCELLED, JobState.JOB_STATE_EXPIRED];

let s3: TestS3Server;
let gemini: MockGeminiUpstream;
let openai: MockOpenAIUpstream;
let gateway: TestGateway;
let owner: SeededAccount;
let stranger: SeededAccount;
let ai: GoogleGenAI;
let downloads: string;

const genai = (key: string): GoogleGenAI => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: gateway.url } });

beforeAll(async () => {
  [s3, gemini, openai] = await Promise.all([startS3Server(), startMockGeminiUpstream(), startMockOpenAIUpstream()]);
  gateway = await startTestGateway({ env: { ...s3.env, BATCH_POLL_MS: '20', BATCH_CONCURRENCY: '4', BATCH_PROVIDER_PASS_THROUGH: 'off', FILE_MAX_BYTES: String(20 * 1024 * 1024) } });
  await addRoutedModel(gateway, { model: MODELS.gemini, channel: { name: 'gf-gemini-up', type: 'gemini', base_url: gemini.url, api_key: 'gemini-upstream-test', models: { [MODELS.gemini]: 'gemini-2.5-flash' } } });
  await addRoutedModel(gateway, { model: MODELS.openai, channel: { name: 'gf-openai-up', type: 'openai', base_url: openai.url, api_key: 'sk-upstream-test', models: { [MODELS.openai]: 'gpt-4o-mini' } } });
  owner = await seedAccount(gateway, { balanceUsd: 20 });
  stranger = await seedAccount(gateway);
  ai = genai(owner.key);
  downloads = await mkdtemp(path.join(tmpdir(), 'unigate-gemini-files-'));
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await Promise.all([s3?.close(), gemini?.close(), openai?.close()]);
  if (downloads !== undefined) await rm(downloads, { recursive: true, force: true });
});

describe('Gemini files', () => {
  it('uploads, reads, lists, downloads and deletes a file as @google/genai does', async () => {
    const text = 'hello from the Files API\n';
    const file = await ai.files.upload({ file: new Blob([text], { type: 'text/plain' }), config: { displayName: 'greeting.txt' } });
    expect(file).toMatchObject({ displayName: 'greeting.txt', mimeType: 'text/plain', sizeBytes: String(Buffer.byteLength(text)), state: 'ACTIVE', source: 'UPLOADED' });
    expect(file.name).toMatch(/^files\//);
    // Gemini keeps uploads for 48 hours.
    expect(Date.parse(file.expirationTime as string) - Date.parse(file.createTime as string)).toBe(48 * 3_600_000);

    expect(await ai.files.get({ name: file.name as string })).toEqual(file);
    const names: string[] = [];
    for await (const listed of await ai.files.list({ config: { pageSize: 1 } })) names.push(listed.name as string);
    expect(names).toContain(file.name);

    const target = path.join(downloads, 'greeting.txt');
    await ai.files.download({ file: file.name as string, downloadPath: target });
    expect(await readFile(target, 'utf8')).toBe(text);

    await ai.files.delete({ name: file.name as string });
    await expect(ai.files.get({ name: file.name as string })).rejects.toMatchObject({ status: 404 });
  });

  it('takes a large file in several resumable chunks', async () => {
    // The SDK sends 8 MiB a chunk: 9 MiB is two chunks, the second with `upload, finalize`.
    const body = Buffer.alloc(9 * 1024 * 1024);
    for (let index = 0; index < body.length; index += 4096) body[index] = (index / 4096) % 251;
    const file = await ai.files.upload({ file: new Blob([body], { type: 'application/octet-stream' }), config: { displayName: 'large.bin' } });
    expect(file.sizeBytes).toBe(String(body.length));
    const target = path.join(downloads, 'large.bin');
    await ai.files.download({ file: file.name as string, downloadPath: target });
    expect((await readFile(target)).equals(body)).toBe(true);
    await ai.files.delete({ name: file.name as string });
    // 9 MiB in and out of the database's chunks: on PostgreSQL, on a loaded machine, past the default 20 s.
  }, 90_000);

  it('never shows one account\'s file to another', async () => {
    const file = await ai.files.upload({ file: new Blob(['mine'], { type: 'text/plain' }) });
    const other = genai(stranger.key);
    await expect(other.files.get({ name: file.name as string })).rejects.toMatchObject({ status: 404 });
    await expect(other.files.delete({ name: file.name as string })).rejects.toMatchObject({ status: 404 });
    await expect(other.files.download({ file: file.name as string, downloadPath: path.join(downloads, 'stolen.txt') })).rejects.toMatchObject({ status: 404 });
    const theirs: string[] = [];
    for await (const listed of await other.files.list()) theirs.push(listed.name as string);
    expect(theirs).not.toContain(file.name);
    // Nor may another account's batch read it.
    await expect(other.batches.create({ model: MODELS.gemini, src: file.name as string })).rejects.toMatchObject({ status: 404 });
  });
});

describe('Gemini resumable uploads', () => {
  const start = (key: string, size: number): Promise<Response> => fetch(`${gateway.url}/upload/v1beta/files`, {
    method: 'POST',
    headers: { 'x-goog-api-key': key, 'content-type': 'application/json', 'x-goog-upload-protocol': 'resumable', 'x-goog-upload-command': 'start', 'x-goog-upload-header-content-length': String(size), 'x-goog-upload-header-content-type': 'text/plain' },
    body: JSON.stringify({ file: { displayName: 'raw.txt' } }),
  });
  const send = (url: string, key: string, command: string, offset: number, body: string): Promise<Response> => fetch(url, {
    method: 'POST', headers: { 'x-goog-api-key': key, 'x-goog-upload-command': command, 'x-goog-upload-offset': String(offset) }, body,
  });

  it('takes chunks only from the upload\'s owner, in order, and makes one file of one finalize', async () => {
    const started = await start(owner.key, 10);
    expect(started.status).toBe(200);
    const url = started.headers.get('x-goog-upload-url') as string;
    expect(url).toContain('/upload/v1beta/files?upload_id=');
    // Another account cannot add to it or finish it.
    expect((await send(url, stranger.key, 'upload', 0, 'hello')).status).toBe(404);
    // A chunk at the wrong offset is refused; the right one is taken.
    expect((await send(url, owner.key, 'upload', 3, 'hello')).status).toBe(400);
    const first = await send(url, owner.key, 'upload', 0, 'hello');
    expect(first.headers.get('x-goog-upload-status')).toBe('active');
    // Finalizing before every declared byte arrived is refused.
    expect((await send(url, owner.key, 'finalize', 5, '')).status).toBe(400);
    const last = await send(url, owner.key, 'upload, finalize', 5, 'world');
    expect(last.headers.get('x-goog-upload-status')).toBe('final');
    const { file } = await last.json() as { file: { name: string; sizeBytes: string } };
    expect(file.sizeBytes).toBe('10');
    // A replayed finalize makes no second file.
    expect((await send(url, owner.key, 'finalize', 10, '')).status).toBe(404);
    const target = path.join(downloads, 'raw.txt');
    await ai.files.download({ file: file.name, downloadPath: target });
    expect(await readFile(target, 'utf8')).toBe('helloworld');
  });

  it('refuses a file larger than the limit at the start', async () => {
    const response = await start(owner.key, 21 * 1024 * 1024);
    expect(response.status).toBe(413);
  });
});

describe('Gemini batches from an input file', () => {
  it('runs the file\'s requests and answers in a results file the SDK downloads', async () => {
    const keys = ['alpha', 'beta', 'gamma', 'delta'];
    const lines = keys.map((key, index) => JSON.stringify({
      key,
      request: { ...(index % 2 === 1 ? { model: `models/${MODELS.openai}` } : {}), contents: [{ role: 'user', parts: [{ text: `Say something about ${key}.` }] }], generationConfig: { maxOutputTokens: 40 } },
    }));
    const input = await ai.files.upload({ file: new Blob([`${lines.join('\n')}\n`], { type: 'application/jsonl' }), config: { displayName: 'requests.jsonl' } });
    const created = await ai.batches.create({ model: MODELS.gemini, src: input.name as string, config: { displayName: 'file-batch' } });
    expect(created.displayName).toBe('file-batch');
    let job: BatchJob = created;
    for (let attempt = 0; attempt < 600 && !ENDED.includes(job.state as string); attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      job = await ai.batches.get({ name: created.name as string });
    }
    expect(job.state).toBe(JobState.JOB_STATE_SUCCEEDED);
    expect(job.dest?.inlinedResponses).toBeUndefined();
    const resultName = job.dest?.fileName as string;
    expect(resultName).toMatch(/^files\//);

    const results = await ai.files.get({ name: resultName });
    expect(results.source).toBe('GENERATED');
    const target = path.join(downloads, 'results.jsonl');
    await ai.files.download({ file: resultName, downloadPath: target });
    const answered = (await readFile(target, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { key: string; response?: { candidates?: Array<{ content: { parts: Array<{ text?: string }> } }> }; error?: unknown });
    expect(answered.map((line) => line.key)).toEqual(keys);
    for (const line of answered) {
      expect(line.error).toBeUndefined();
      expect(line.response?.candidates?.[0]?.content.parts[0]?.text).toBeTruthy();
    }
    // The Gemini line answers as the same request made on its own.
    const single = await ai.models.generateContent({ model: MODELS.gemini, contents: [{ role: 'user', parts: [{ text: 'Say something about alpha.' }] }], config: { maxOutputTokens: 40 } });
    expect(answered[0]?.response?.candidates?.[0]?.content.parts[0]?.text).toBe(single.text);
  });

  it('refuses a file with a bad line before anything is queued', async () => {
    const input = await ai.files.upload({ file: new Blob(['{"key":"a","request":{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}}\nnot json\n'], { type: 'application/jsonl' }) });
    await expect(ai.batches.create({ model: MODELS.gemini, src: input.name as string })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('line 2') });
    await expect(ai.batches.create({ model: MODELS.gemini, src: 'files/file_missing' })).rejects.toMatchObject({ status: 404 });
  });
});
