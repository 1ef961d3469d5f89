/**
 * The mock OpenAI upstream's media endpoints: POST /v1/images/generations|edits|variations,
 * /v1/audio/transcriptions|translations|speech and /v1/moderations. The OpenAI mock hands these paths over before
 * reading the body, because multipart uploads are parsed here as streams (busboy): files are hashed and counted,
 * never kept, so a 25 MB upload costs the test process no memory. Limits as OpenAI's: 25 MB per audio file
 * (413 above), 50 MB per image. Faults of the OpenAI mock (status, delay, reset, cut-stream) apply here too.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import busboy from 'busboy';
import {
  imagesAnswer, moderationAnswer, SPEECH_CONTENT_TYPES, speechAudio, transcriptionAnswer, transcriptionEvents, validateImageOptions, wavSeconds, type AudioFacts,
} from './mock-openai-media-answers.js';
import type { MockFault, RecordedRequest } from './mock-openai-upstream.js';
import { defaultErrorBodyForStatus, errorBody, invalidApiKeyError, invalidJsonError, invalidRequest, MockHttpError } from './mock-openai-upstream-wire.js';

const MEDIA_PATHS = new Set(['/v1/images/generations', '/v1/images/edits', '/v1/images/variations', '/v1/audio/transcriptions', '/v1/audio/translations', '/v1/audio/speech', '/v1/moderations']);
const AUDIO_LIMIT_BYTES = 25 * 1024 * 1024;
const IMAGE_LIMIT_BYTES = 50 * 1024 * 1024;
const JSON_LIMIT_BYTES = 1024 * 1024;
/** Speech is written in chunks of this size, so clients see it stream. */
const SPEECH_CHUNK_BYTES = 16 * 1024;

export interface MediaMockContext {
  apiKey: string;
  takeFault(): MockFault | null;
  /** Where requests are recorded; null when recording is off. */
  requests: RecordedRequest[] | null;
  origin(): string;
  /** Pause between streamed chunks (speech audio, transcription events). */
  chunkDelayMs: number;
}

export function isOpenAIMediaRequest(request: IncomingMessage): boolean {
  return request.method === 'POST' && MEDIA_PATHS.has((request.url ?? '').split('?')[0] ?? '');
}

interface UploadedFile {
  field: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
  head: Buffer;
}

interface ParsedForm {
  fields: Record<string, string>;
  files: UploadedFile[];
}

function headersOf(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  return headers;
}

function readJson(request: IncomingMessage): Promise<{ raw: string; body: unknown }> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= JSON_LIMIT_BYTES) parts.push(chunk);
    });
    request.on('error', reject);
    request.on('end', () => {
      if (size > JSON_LIMIT_BYTES) return reject(new MockHttpError(413, errorBody('Request body too large.', 'invalid_request_error')));
      const raw = Buffer.concat(parts).toString('utf8');
      try {
        resolve({ raw, body: JSON.parse(raw) as unknown });
      } catch {
        reject(invalidJsonError());
      }
    });
  });
}

/** Parses a multipart form as a stream: fields kept, files hashed and counted (their first 4 KiB kept for headers). */
function readForm(request: IncomingMessage, fileLimit: number): Promise<ParsedForm> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: request.headers, limits: { fileSize: fileLimit + 1 } });
    } catch {
      request.resume();
      reject(invalidRequest("Invalid Content-Type header ('multipart/form-data' with a boundary expected)."));
      return;
    }
    const form: ParsedForm = { fields: {}, files: [] };
    let failure: MockHttpError | null = null;
    parser.on('field', (name: string, value: string) => {
      form.fields[name] = value;
    });
    parser.on('file', (name: string, stream: NodeJS.ReadableStream & { truncated?: boolean }, info: busboy.FileInfo) => {
      const hash = createHash('sha256');
      const file: UploadedFile = { field: name, filename: info.filename ?? 'file', contentType: info.mimeType, size: 0, sha256: '', head: Buffer.alloc(0) };
      stream.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        if (file.head.length < 4096) file.head = Buffer.concat([file.head, chunk.subarray(0, 4096 - file.head.length)]);
        file.size += chunk.length;
      });
      stream.on('limit', () => {
        failure ??= new MockHttpError(413, errorBody(`Maximum content size limit (${fileLimit}) exceeded (${fileLimit + 1} bytes read)`, 'server_error'));
      });
      stream.on('end', () => {
        file.sha256 = hash.digest('hex');
        form.files.push(file);
      });
    });
    parser.on('error', () => {
      failure ??= invalidRequest('Could not parse multipart form');
      request.resume();
      reject(failure);
    });
    parser.on('close', () => (failure === null ? resolve(form) : reject(failure)));
    request.pipe(parser);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), 'x-request-id': `req_${createHash('sha1').update(text).digest('hex').slice(0, 24)}` });
  res.end(text);
}

function intField(value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  return typeof value === 'number' ? value : Number(value);
}

function requireString(value: unknown, name: string): string {
  if (typeof value !== 'string' || value === '') throw invalidRequest(`Missing required parameter: '${name}'.`, name, 'missing_required_parameter');
  return value;
}

function audioFacts(file: UploadedFile): AudioFacts {
  return { filename: file.filename, size: file.size, sha256: file.sha256, seconds: wavSeconds(file.head, file.size) ?? file.size / 16_000 };
}

async function writeChunk(res: ServerResponse, chunk: string | Buffer): Promise<void> {
  if (res.write(chunk)) return;
  await new Promise<void>((resolve) => {
    const done = (): void => (res.off('drain', done), res.off('close', done), resolve());
    res.on('drain', done);
    res.on('close', done);
  });
}

function cut(res: ServerResponse): void {
  const socket = res.socket as Socket | null;
  socket?.destroy();
}

async function serve(req: IncomingMessage, res: ServerResponse, context: MediaMockContext): Promise<void> {
  const path = (req.url ?? '').split('?')[0] ?? '';
  const multipart = path === '/v1/images/edits' || path === '/v1/images/variations' || path === '/v1/audio/transcriptions' || path === '/v1/audio/translations';
  const auth = req.headers.authorization;
  const presented = auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length).trim() : undefined;
  const record: RecordedRequest = { method: req.method ?? 'POST', path, url: req.url ?? path, headers: headersOf(req), body: undefined, rawBody: '', receivedAt: Date.now() };
  let form: ParsedForm | null = null;
  let json: unknown;
  try {
    if (multipart) {
      const type = req.headers['content-type'] ?? '';
      if (!/^multipart\/form-data/i.test(type)) {
        req.resume();
        throw invalidRequest(`Invalid Content-Type header (${type}), expected multipart/form-data. (HINT: If you're using curl, you can pass -F 'file=@<file_path>' to upload a file.)`);
      }
      form = await readForm(req, path.startsWith('/v1/audio/') ? AUDIO_LIMIT_BYTES : IMAGE_LIMIT_BYTES);
      record.body = { fields: form.fields, files: form.files.map(({ head: _head, ...file }) => file) };
    } else {
      const read = await readJson(req);
      record.rawBody = read.raw;
      record.body = json = read.body;
    }
  } finally {
    context.requests?.push(record);
  }
  const fault = context.takeFault();
  if (fault?.kind === 'reset') return cut(res);
  if (fault?.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, fault.ms));
  if (fault?.kind === 'status') {
    const payload = fault.body === undefined ? defaultErrorBodyForStatus(fault.status) : fault.body;
    res.writeHead(fault.status, { 'content-type': 'application/json', ...(fault.status === 429 ? { 'retry-after': '1' } : {}), ...(fault.headers ?? {}) });
    res.end(typeof payload === 'string' ? payload : JSON.stringify(payload));
    return;
  }
  if (presented !== context.apiKey) throw invalidApiKeyError(presented);
  const body = (json ?? {}) as Record<string, unknown>;
  const fields = form?.fields ?? {};
  switch (path) {
    case '/v1/images/generations': {
      const model = typeof body.model === 'string' ? body.model : 'dall-e-2';
      const n = intField(body.n, 1);
      validateImageOptions(model, n, body.response_format, body.size);
      return sendJson(res, 200, imagesAnswer({ model, prompt: requireString(body.prompt, 'prompt'), n, responseFormat: body.response_format as 'url' | 'b64_json' | undefined, inputImages: 0 }, context.origin()));
    }
    case '/v1/images/edits':
    case '/v1/images/variations': {
      const variation = path === '/v1/images/variations';
      const model = fields.model ?? 'dall-e-2';
      const images = (form?.files ?? []).filter((file) => file.field === 'image' || file.field === 'image[]');
      if (images.length === 0) throw invalidRequest("Missing required parameter: 'image'.", 'image', 'missing_required_parameter');
      if (variation && model !== 'dall-e-2') throw invalidRequest(`Invalid model ${model}. The model must be 'dall-e-2'.`, 'model', 'invalid_value');
      const n = intField(fields.n, 1);
      validateImageOptions(model, n, fields.response_format, fields.size);
      const prompt = variation ? '' : requireString(fields.prompt, 'prompt');
      return sendJson(res, 200, imagesAnswer({ model, prompt, n, responseFormat: fields.response_format as 'url' | 'b64_json' | undefined, inputImages: images.length }, context.origin()));
    }
    case '/v1/audio/transcriptions':
    case '/v1/audio/translations': {
      const file = form?.files.find((entry) => entry.field === 'file');
      if (file === undefined) throw invalidRequest("Missing required parameter: 'file'.", 'file', 'missing_required_parameter');
      const model = requireString(fields.model, 'model');
      const facts = audioFacts(file);
      if (fields.stream === 'true' && path === '/v1/audio/transcriptions') {
        const events = transcriptionEvents(model, facts);
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
        for (const [index, event] of events.entries()) {
          if (fault?.kind === 'cut-stream' && fault.afterChunks === index) return cut(res);
          await writeChunk(res, `data: ${event}\n\n`);
        }
        res.end();
        return;
      }
      const answer = transcriptionAnswer(model, fields.response_format ?? 'json', facts, path === '/v1/audio/translations', fields.language);
      res.writeHead(200, { 'content-type': answer.contentType, 'content-length': String(Buffer.byteLength(answer.body)) });
      res.end(answer.body);
      return;
    }
    case '/v1/audio/speech': {
      const model = requireString(body.model, 'model');
      const input = requireString(body.input, 'input');
      if ([...input].length > 4096) throw invalidRequest("Invalid 'input': string too long. Expected a string with maximum length 4096.", 'input', 'string_above_max_length');
      if (body.voice === undefined) throw invalidRequest("Missing required parameter: 'voice'.", 'voice', 'missing_required_parameter');
      const format = typeof body.response_format === 'string' ? body.response_format : 'mp3';
      const contentType = SPEECH_CONTENT_TYPES[format];
      if (contentType === undefined) throw invalidRequest(`Invalid value: '${format}'.`, 'response_format', 'invalid_value');
      const audio = speechAudio(input, format);
      if (body.stream_format === 'sse') {
        if (model !== 'gpt-4o-mini-tts') throw invalidRequest(`stream_format 'sse' is not supported for model '${model}'.`, 'stream_format', 'unsupported_value');
        res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
        for (let offset = 0; offset < audio.length; offset += SPEECH_CHUNK_BYTES) {
          await writeChunk(res, `data: ${JSON.stringify({ type: 'speech.audio.delta', audio: audio.subarray(offset, offset + SPEECH_CHUNK_BYTES).toString('base64') })}\n\n`);
        }
        const input_tokens = Math.ceil([...input].length / 4);
        const output_tokens = Math.ceil(audio.length / 1000);
        await writeChunk(res, `data: ${JSON.stringify({ type: 'speech.audio.done', usage: { input_tokens, output_tokens, total_tokens: input_tokens + output_tokens } })}\n\n`);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': contentType, 'transfer-encoding': 'chunked' });
      for (let offset = 0, index = 0; offset < audio.length; offset += SPEECH_CHUNK_BYTES, index += 1) {
        if (fault?.kind === 'cut-stream' && fault.afterChunks === index) return cut(res);
        await writeChunk(res, audio.subarray(offset, offset + SPEECH_CHUNK_BYTES));
        if (context.chunkDelayMs > 0 && offset + SPEECH_CHUNK_BYTES < audio.length) await new Promise((resolve) => setTimeout(resolve, context.chunkDelayMs));
      }
      res.end();
      return;
    }
    case '/v1/moderations': {
      const model = typeof body.model === 'string' ? body.model : 'omni-moderation-latest';
      const input = body.input;
      const inputs = typeof input === 'string' ? [input]
        : Array.isArray(input) && input.length > 0 ? input.map((entry: unknown) => (typeof entry === 'string' ? entry : typeof (entry as { text?: unknown }).text === 'string' ? (entry as { text: string }).text : ''))
          : null;
      if (inputs === null) throw invalidRequest("Invalid value for 'input': expected a string or an array.", 'input', 'invalid_value');
      return sendJson(res, 200, moderationAnswer(model, inputs));
    }
    default:
      throw new MockHttpError(404, errorBody(`Invalid URL (POST ${path})`));
  }
}

/** Answers one media request; errors become OpenAI error bodies. */
export function serveOpenAIMedia(req: IncomingMessage, res: ServerResponse, context: MediaMockContext): void {
  serve(req, res, context).catch((error: unknown) => {
    if (error instanceof MockHttpError) sendJson(res, error.status, error.body);
    else if (!res.headersSent) sendJson(res, 500, defaultErrorBodyForStatus(500));
    else res.destroy();
  });
}
