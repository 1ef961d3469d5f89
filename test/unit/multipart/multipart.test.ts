/** The multipart reader (streamed, spooled, bounded) and writer (rebuilt forms), round-tripped through each other. */
import { createServer, type IncomingMessage } from 'node:http';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors/gateway-error.js';
import { encodeMultipartBody, type MultipartPart } from '../../../src/multipart/encode-multipart-body.js';
import { readMultipartForm, type MultipartForm, type MultipartLimits } from '../../../src/multipart/read-multipart-form.js';

let directory: string;
let spool: string;
let limits: MultipartLimits;
/** What the server made of the last request: the form (kept until the test disposes it) or the error. */
let handler: (request: IncomingMessage) => Promise<MultipartForm>;
const server = createServer((request, response) => {
  handler(request).then(
    (form) => {
      received.push(form);
      response.end('ok');
    },
    (error: unknown) => {
      response.statusCode = error instanceof GatewayError ? error.status : 500;
      response.end(error instanceof GatewayError ? `${error.code}: ${error.message}` : String(error));
    },
  );
});
const received: MultipartForm[] = [];
let url: string;

beforeAll(async () => {
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-multipart-'));
  spool = path.join(directory, 'spool');
  await (await import('node:fs/promises')).mkdir(spool);
  limits = { maxFileBytes: 1000, maxFiles: 2, fileFields: new Set(['file', 'image[]']), maxFields: 8, maxFieldBytes: 200, spoolDirectory: spool };
  handler = (request) => readMultipartForm(request, limits);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});

afterAll(async () => {
  server.close();
  await rm(directory, { recursive: true, force: true });
});

async function post(body: string | Buffer | FormData, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const response = await fetch(url, { method: 'POST', body, headers });
  return { status: response.status, text: await response.text() };
}

async function streamed(body: ReturnType<typeof encodeMultipartBody>): Promise<{ status: number; text: string }> {
  const chunks: Buffer[] = [];
  for await (const chunk of body.open()) chunks.push(Buffer.from(chunk));
  const bytes = Buffer.concat(chunks);
  expect(bytes.length).toBe(body.length);
  return post(bytes, { 'content-type': body.contentType });
}

describe('readMultipartForm', () => {
  it('spools files to private temporary files and keeps fields in order', async () => {
    const form = new FormData();
    form.set('model', 'whisper-1');
    form.set('file', new Blob([Buffer.from('RIFF-audio-bytes')], { type: 'audio/wav' }), '../../etc/speech.wav');
    form.append('model', 'last-wins');
    expect((await post(form)).status).toBe(200);
    const parsed = received.pop() as MultipartForm;
    expect(parsed.field('model')).toBe('last-wins');
    expect(parsed.files).toHaveLength(1);
    const [file] = parsed.files;
    expect(file).toMatchObject({ field: 'file', filename: 'speech.wav', contentType: 'audio/wav', size: 16 });
    expect(path.dirname(file?.path ?? '')).toBe(spool);
    expect(await readFile(file?.path ?? '', 'utf8')).toBe('RIFF-audio-bytes');
    await parsed.dispose();
    expect(await readdir(spool)).toEqual([]);
  });

  it('accepts a file of exactly the limit and refuses one byte more with 413, leaving nothing on disk', async () => {
    const exact = new FormData();
    exact.set('file', new Blob([new Uint8Array(1000)]), 'a.wav');
    expect((await post(exact)).status).toBe(200);
    await (received.pop() as MultipartForm).dispose();
    const over = new FormData();
    over.set('file', new Blob([new Uint8Array(1001)]), 'a.wav');
    const answer = await post(over);
    expect(answer.status).toBe(413);
    expect(answer.text).toContain('payload_too_large');
    expect(await readdir(spool)).toEqual([]);
  });

  it('refuses early from a declared Content-Length beyond what the limits allow', async () => {
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const outgoing = request(url, { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=b', 'content-length': String(2 * 1000 + 1024 * 1024 + 1) } }, (response) => {
        resolve(response.statusCode ?? 0);
        outgoing.destroy();
      });
      outgoing.on('error', reject);
      outgoing.write('--b\r\n');
    });
    expect(status).toBe(413);
  });

  it('answers 400 for a wrong content type, malformed bodies, unknown file fields and too many files or fields', async () => {
    expect((await post('{"model":"x"}', { 'content-type': 'application/json' })).text).toContain('multipart/form-data');
    expect((await post('x', { 'content-type': 'multipart/form-data' })).status).toBe(400);
    expect((await post('--b\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nabc', { 'content-type': 'multipart/form-data; boundary=b' })).status).toBe(400);
    const unknown = new FormData();
    unknown.set('other', new Blob(['x']), 'x.bin');
    expect((await post(unknown)).text).toContain("Unexpected file field 'other'");
    const many = new FormData();
    for (let index = 0; index < 3; index += 1) many.append('image[]', new Blob(['x']), `${index}.png`);
    expect((await post(many)).status).toBe(400);
    const long = new FormData();
    long.set('prompt', 'x'.repeat(201));
    expect((await post(long)).text).toContain("'prompt' is longer than 200 bytes");
    expect(await readdir(spool)).toEqual([]);
  });
});

describe('encodeMultipartBody', () => {
  it('round-trips any fields and files through the reader, with the exact Content-Length', async () => {
    const name = fc.stringMatching(/^[a-z_]{1,12}$/).filter((value) => value !== 'file' && value !== 'image[]');
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ name, value: fc.string({ maxLength: 60 }) }), { maxLength: 5 }),
        fc.array(fc.record({ filename: fc.string({ minLength: 1, maxLength: 20 }).filter((value) => !/[\\/\0]/.test(value) && value.trim() !== '' && value !== '.' && value !== '..'), content: fc.uint8Array({ maxLength: 1000 }) }), { maxLength: 2 }),
        async (fields, files) => {
          const parts: MultipartPart[] = fields.map((field) => ({ kind: 'field', ...field }));
          for (const [index, file] of files.entries()) {
            const filePath = path.join(directory, `source-${index}`);
            await writeFile(filePath, file.content);
            parts.push({ kind: 'file', name: index === 0 ? 'file' : 'image[]', filename: file.filename, contentType: 'application/octet-stream', path: filePath, size: file.content.length });
          }
          const answer = await streamed(encodeMultipartBody(parts));
          expect(answer.status, answer.text).toBe(200);
          const parsed = received.pop() as MultipartForm;
          try {
            expect(parsed.fields).toEqual(fields);
            expect(parsed.files.map((file) => file.size)).toEqual(files.map((file) => file.content.length));
            for (const [index, file] of parsed.files.entries()) {
              expect(Buffer.compare(await readFile(file.path), Buffer.from(files[index]?.content ?? []))).toBe(0);
              expect(file.filename).toBe(path.basename((files[index]?.filename ?? '').replace(/"/g, '%22')));
            }
          } finally {
            await parsed.dispose();
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('opens afresh for each attempt, so a retry sends the same bytes', async () => {
    const filePath = path.join(directory, 'again.bin');
    await writeFile(filePath, Buffer.alloc(200_000, 7));
    const body = encodeMultipartBody([{ kind: 'field', name: 'model', value: 'm' }, { kind: 'file', name: 'file', filename: 'a.bin', contentType: 'application/octet-stream', path: filePath, size: 200_000 }]);
    const read = async (): Promise<Buffer> => {
      const chunks: Buffer[] = [];
      for await (const chunk of body.open()) chunks.push(Buffer.from(chunk));
      return Buffer.concat(chunks);
    };
    const first = await read();
    expect(first.length).toBe(body.length);
    expect((await read()).equals(first)).toBe(true);
  });
});
