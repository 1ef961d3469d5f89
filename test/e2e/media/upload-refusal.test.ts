/**
 * Uploads refused before they are read, with the real process: a caller whose account cannot pay at all, whose key
 * is paused at its quota cap, or who is over the key's RPM gets the same error as admission would give after the
 * upload (402 insufficient_balance, 429 quota_exhausted, 429 with Retry-After), the upstream never sees the request,
 * and nothing is spooled: the spool directory (the gateway's TMPDIR) is watched for any file created during it.
 * The client still gets the answer, not a reset: the gateway reads and drops the upload before it answers.
 */
import { randomBytes } from 'node:crypto';
import { openAsBlob, watch, type FSWatcher } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wavOfSeconds, writeWavFile } from '../../support/audio-fixtures.js';
import type { MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { startUploadGateway, type UploadGateway } from './upload-gateway.js';

const LIMIT = 25 * 1024 * 1024;
const MINUTE = 60_000;

let gateway: UploadGateway;
let spool: string;
let api: string;
let upstream: MockOpenAIUpstream;
let bigFile: string;
const admin = (method: string, route: string, body?: unknown): Promise<Record<string, unknown>> => gateway.admin(method, route, body);

/** An account with `balanceUsd` and one key with the given attributes; the OpenAI SDK client of that key. */
async function caller(balanceUsd: number, key: Record<string, unknown> = {}): Promise<OpenAI> {
  const account = await admin('POST', '/admin/accounts', { email: `refusal-${randomBytes(4).toString('hex')}@example.com` });
  if (balanceUsd > 0) await admin('POST', `/admin/accounts/${String(account.id)}/credits`, { amount_usd: balanceUsd });
  const created = await admin('POST', `/admin/accounts/${String(account.id)}/keys`, key);
  return new OpenAI({ baseURL: `${api}/v1`, apiKey: String(created.key), maxRetries: 0, timeout: 60_000 });
}

/** Every name that appeared in the spool directory while `run` ran (inotify sees a file however briefly it lived). */
async function spooledDuring<T>(run: () => Promise<T>): Promise<{ result: T; created: string[] }> {
  const created: string[] = [];
  const watcher: FSWatcher = watch(spool, (_event, name) => {
    if (name !== null) created.push(String(name));
  });
  try {
    const result = await run();
    await new Promise((resolve) => setTimeout(resolve, 200));
    return { result, created };
  } finally {
    watcher.close();
  }
}

async function transcribeBig(client: OpenAI): Promise<unknown> {
  return client.audio.transcriptions.create({ file: await toFile(await openAsBlob(bigFile, { type: 'audio/wav' }), 'big.wav'), model: 'whisper' }).catch((caught: unknown) => caught);
}

function expectApiError(error: unknown, status: number, code: string, type: string): InstanceType<typeof OpenAI.APIError> {
  expect(error).toBeInstanceOf(OpenAI.APIError);
  const apiError = error as InstanceType<typeof OpenAI.APIError>;
  expect(apiError.status).toBe(status);
  expect(apiError.error).toMatchObject({ code, type });
  return apiError;
}

/** Fixed RPM windows are aligned to the minute: start a sequence early enough in one to finish inside it. */
async function roomInWindow(neededMs: number): Promise<void> {
  const left = MINUTE - (Date.now() % MINUTE);
  if (left < neededMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

beforeAll(async () => {
  gateway = await startUploadGateway('upload-refusal');
  ({ spool, api, upstream } = gateway);
  await admin('POST', '/admin/models', { id: 'whisper', kind: 'audio', pricing: { per_audio_minute: 0.006 } });
  await admin('POST', '/admin/models', { id: 'image-editor', kind: 'image', pricing: { per_image: 0.04 } });
  await admin('POST', '/admin/channels', { name: 'openai', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { whisper: 'whisper-1', 'whisper-free': 'whisper-1', 'image-editor': 'gpt-image-1' } });
  bigFile = path.join(gateway.directory, 'big.wav');
  await writeWavFile(bigFile, LIMIT);
}, 60_000);

afterAll(async () => {
  await gateway?.close();
});

describe('uploads refused before they are read', () => {
  it('an empty wallet: a 25 MB transcription gets 402 insufficient_balance, the upstream sees nothing, nothing is spooled', async () => {
    const client = await caller(0);
    const before = upstream.requests.length;
    const { result, created } = await spooledDuring(() => transcribeBig(client));
    expectApiError(result, 402, 'insufficient_balance', 'insufficient_balance');
    expect(upstream.requests.length).toBe(before);
    expect(created).toEqual([]);
    expect(await readdir(spool)).toEqual([]);
  }, 60_000);

  it('an empty wallet: a 25 MB image edit is refused the same way', async () => {
    const client = await caller(0);
    const before = upstream.requests.length;
    const { result, created } = await spooledDuring(async () =>
      client.images.edit({ model: 'image-editor', prompt: 'add a hat', image: await toFile(await openAsBlob(bigFile, { type: 'image/png' }), 'big.png') }).catch((caught: unknown) => caught));
    expectApiError(result, 402, 'insufficient_balance', 'insufficient_balance');
    expect(upstream.requests.length).toBe(before);
    expect(created).toEqual([]);
  }, 60_000);

  it('a key paused at its quota cap: 429 quota_exhausted with Retry-After, nothing spooled', async () => {
    const client = await caller(50, { quota_usd: 0 });
    const before = upstream.requests.length;
    const { result, created } = await spooledDuring(() => transcribeBig(client));
    const error = expectApiError(result, 429, 'quota_exhausted', 'rate_limit_error');
    expect(error.headers?.get('retry-after')).toMatch(/^\d+$/);
    expect(upstream.requests.length).toBe(before);
    expect(created).toEqual([]);
  }, 60_000);

  it('RPM: counted once per admitted request (a refused one gives its count back); over it, 429 before the upload', async () => {
    const client = await caller(50, { rpm: 2 });
    await roomInWindow(30_000);
    // Refused after the early check (no model in the form): not counted.
    const invalid = await client.audio.transcriptions.create({ file: await toFile(wavOfSeconds(1), 'a.wav'), model: '' }).catch((caught: unknown) => caught);
    expect(invalid).toBeInstanceOf(OpenAI.APIError);
    expect((invalid as InstanceType<typeof OpenAI.APIError>).status).toBe(400);
    // Two admitted uploads fill the window of 2 exactly: each was counted once, not at the early check and again.
    const admitted = await spooledDuring(async () => {
      const first = await client.audio.transcriptions.create({ file: await toFile(wavOfSeconds(1), 'b.wav'), model: 'whisper' }).withResponse();
      const second = await client.audio.transcriptions.create({ file: await toFile(wavOfSeconds(1), 'c.wav'), model: 'whisper' }).withResponse();
      return [first.response.headers, second.response.headers];
    });
    expect(admitted.result.map((headers) => [headers.get('x-ratelimit-dimension'), headers.get('x-ratelimit-remaining')])).toEqual([['key-rpm', '1'], ['key-rpm', '0']]);
    // The watcher does see spooled uploads: the admitted ones were.
    expect(admitted.created.length).toBeGreaterThanOrEqual(2);
    const before = upstream.requests.length;
    const { result, created } = await spooledDuring(() => transcribeBig(client));
    const error = expectApiError(result, 429, 'rate_limit_exceeded', 'rate_limit_error');
    expect(Number(error.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(error.headers?.get('x-ratelimit-dimension')).toBe('key-rpm');
    expect(error.headers?.get('x-ratelimit-remaining')).toBe('0');
    expect(upstream.requests.length).toBe(before);
    expect(created).toEqual([]);
  }, 90_000);

  it('the refusal does not wait for the upload: a client that sends 1 MB of a declared 25 MB gets 402 and a closed connection', async () => {
    const client = await caller(0);
    const answer = await new Promise<{ status: number; body: string; connection: string | undefined }>((resolve, reject) => {
      const outgoing = httpRequest(`${api}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(LIMIT) },
      }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => {
          resolve({ status: response.statusCode ?? 0, body, connection: response.headers.connection });
          outgoing.destroy();
        });
      });
      outgoing.on('error', reject);
      outgoing.write('--x\r\nContent-Disposition: form-data; name="file"; filename="big.wav"\r\nContent-Type: audio/wav\r\n\r\n');
      outgoing.write(Buffer.alloc(1024 * 1024));
    });
    expect(answer.status).toBe(402);
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'insufficient_balance', type: 'insufficient_balance' } });
    // The rest of the upload never came: the connection is not kept for another request.
    expect(answer.connection).toBe('close');
    expect(await readdir(spool)).toEqual([]);
  }, 30_000);

  it('an empty wallet may still use a free model of the endpoint; the priced one is refused (late, once the model is known)', async () => {
    await admin('POST', '/admin/models', { id: 'whisper-free', kind: 'audio', pricing: {} });
    const client = await caller(0);
    // The catalog reloads after the admin change.
    const free = await client.audio.transcriptions.create({ file: await toFile(wavOfSeconds(1), 'free.wav'), model: 'whisper-free' });
    expect(free.text).toBeTypeOf('string');
    expectApiError(await transcribeBig(client), 402, 'insufficient_balance', 'insufficient_balance');
  }, 60_000);
});
