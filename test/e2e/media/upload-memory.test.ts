/**
 * The 25 MB audio file limit with the real process: a 25 MB audio upload goes through `unigate serve` to the upstream with flat
 * memory (the file is spooled to disk and streamed on, never held whole), 25 MB + 1 byte is refused with 413 (while
 * streaming, and earlier from a Content-Length past the limit), and no spooled file outlives its request.
 * Memory is the gateway process's peak resident set (VmHWM in /proc/<pid>/status) before and after the upload.
 */
import { createHash } from 'node:crypto';
import { createReadStream, openAsBlob } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wavOfSeconds, writeWavFile } from '../../support/audio-fixtures.js';
import type { MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { waitUntil, type RunningCommand } from '../cli/cli-process.js';
import { startUploadGateway, type UploadGateway } from './upload-gateway.js';

const LIMIT = 25 * 1024 * 1024;
/**
 * Peak RSS growth allowed for one 25 MB upload. Live memory stays small (64 KiB chunks, disk in between), but the
 * dead socket buffers of an upload wait for V8's external-memory collection, which runs every 64 MiB or so: the
 * peak grows once by about that much (42–53 MiB measured here) and then no further, whatever the size or number of
 * uploads. The concurrent test below is the one that tells streaming from buffering.
 */
const SINGLE_UPLOAD_GROWTH_BYTES = 80 * 1024 * 1024;
/** Six concurrent 25 MB uploads: held in memory they would need 150 MiB on top of everything else. */
const CONCURRENT_GROWTH_BYTES = 100 * 1024 * 1024;

let gateway: UploadGateway;
let directory: string;
let spool: string;
let api: string;
let server: RunningCommand;
let upstream: MockOpenAIUpstream;
let client: OpenAI;

async function peakRss(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const match = /VmHWM:\s+(\d+) kB/.exec(status);
  if (match === null) throw new Error('no VmHWM');
  return Number(match[1]) * 1024;
}

beforeAll(async () => {
  gateway = await startUploadGateway('upload-memory', process.env.UPLOAD_TEST_LOG_LEVEL ?? 'warn');
  ({ directory, spool, api, server, upstream } = gateway);
  const { admin } = gateway;
  await admin('POST', '/admin/models', { id: 'whisper', kind: 'audio', pricing: { per_audio_minute: 0.006 } });
  await admin('POST', '/admin/channels', { name: 'openai', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { whisper: 'whisper-1' } });
  const account = await admin('POST', '/admin/accounts', { email: 'upload@example.com' });
  await admin('POST', `/admin/accounts/${String(account.id)}/credits`, { amount_usd: 50 });
  const key = await admin('POST', `/admin/accounts/${String(account.id)}/keys`, {});
  client = new OpenAI({ baseURL: `${api}/v1`, apiKey: String(key.key), maxRetries: 0, timeout: 60_000 });
  await writeWavFile(path.join(directory, 'exact.wav'), LIMIT);
  await writeWavFile(path.join(directory, 'over.wav'), LIMIT + 1);
}, 60_000);

afterAll(async () => {
  await gateway?.close();
});

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The gateway removes an upload's spool file when its handler ends, just after the answer's last byte is written. */
async function expectSpoolEmptied(): Promise<void> {
  await waitUntil(async () => (await readdir(spool)).length === 0, 15_000, 'spool emptied after the request');
}

const mib = (bytes: number): string => (bytes / 1048576).toFixed(1);

describe('25 MB audio uploads through the gateway process', () => {
  let baseline = 0;

  it('passes a 25 MB file to the upstream byte for byte with bounded memory', async () => {
    // Warm up the code paths (JIT, pools) with a small upload first.
    await client.audio.transcriptions.create({ file: await toFile(wavOfSeconds(1), 'warm.wav'), model: 'whisper' });
    baseline = await peakRss(server.pid);
    const exact = path.join(directory, 'exact.wav');
    const result = await client.audio.transcriptions.create({ file: await toFile(await openAsBlob(exact, { type: 'audio/wav' }), 'exact.wav'), model: 'whisper' });
    const after = await peakRss(server.pid);
    expect(result.text).toContain(`of ${LIMIT} bytes`);
    const sent = upstream.requests.at(-1)?.body as { files: Array<{ size: number; sha256: string }> };
    expect(sent.files[0]?.size).toBe(LIMIT);
    expect(sent.files[0]?.sha256).toBe(await sha256Of(exact));
    console.log(`gateway peak RSS: ${mib(baseline)} MiB before, ${mib(after)} MiB after one 25 MiB upload (growth ${mib(after - baseline)} MiB)`);
    expect(after - baseline).toBeLessThan(SINGLE_UPLOAD_GROWTH_BYTES);
    await expectSpoolEmptied();
  }, 60_000);

  it('keeps memory flat when six 25 MB uploads (150 MiB) are in flight at once', async () => {
    const exact = path.join(directory, 'exact.wav');
    const results = await Promise.all(Array.from({ length: 6 }, async () => client.audio.transcriptions.create({ file: await toFile(await openAsBlob(exact, { type: 'audio/wav' }), 'exact.wav'), model: 'whisper' })));
    const after = await peakRss(server.pid);
    expect(results.every((result) => result.text.includes(`of ${LIMIT} bytes`))).toBe(true);
    console.log(`gateway peak RSS after six concurrent 25 MiB uploads: ${mib(after)} MiB (growth over the warm baseline ${mib(after - baseline)} MiB)`);
    // Holding the uploads in memory would take 150 MiB; streaming stays near what one upload showed.
    expect(after - baseline).toBeLessThan(CONCURRENT_GROWTH_BYTES);
    await expectSpoolEmptied();
  }, 90_000);

  it('refuses 25 MB + 1 byte with 413 while streaming, and a larger declared body before reading it', async () => {
    const before = upstream.requests.length;
    const file = await openAsBlob(path.join(directory, 'over.wav'), { type: 'audio/wav' });
    const error = await client.audio.transcriptions.create({ file: await toFile(file, 'over.wav'), model: 'whisper' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(413);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'payload_too_large', type: 'invalid_request_error', param: 'file' });
    // A body declared larger than the limit allows is refused from its Content-Length, before it is sent.
    const early = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const outgoing = httpRequest(`${api}/v1/audio/transcriptions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(LIMIT + 2 * 1024 * 1024) },
      }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => {
          resolve({ status: response.statusCode ?? 0, body });
          outgoing.destroy();
        });
      });
      outgoing.on('error', reject);
      outgoing.write('--x\r\nContent-Disposition: form-data; name="file"; filename="big.wav"\r\n\r\n');
    });
    expect(early.status).toBe(413);
    expect(JSON.parse(early.body)).toMatchObject({ error: { code: 'payload_too_large' } });
    expect(upstream.requests.length).toBe(before);
    await expectSpoolEmptied();
  }, 60_000);

  it('removes the spooled part of an upload the client abandons', async () => {
    const controller = new AbortController();
    const outgoing = httpRequest(`${api}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${client.apiKey}`, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(LIMIT) },
      signal: controller.signal,
    });
    outgoing.on('error', () => undefined);
    outgoing.write('--x\r\nContent-Disposition: form-data; name="file"; filename="gone.wav"\r\nContent-Type: audio/wav\r\n\r\n');
    outgoing.write(Buffer.alloc(1024 * 1024));
    await waitUntil(async () => (await readdir(spool)).length === 1, 5000, 'upload spooled');
    controller.abort();
    await waitUntil(async () => (await readdir(spool)).length === 0, 5000, 'spool emptied after the abort');
  }, 30_000);
});
