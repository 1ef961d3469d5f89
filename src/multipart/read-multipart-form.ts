import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { IncomingMessage } from 'node:http';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type busboy from 'busboy';
import { loadOnce } from '../shared/load-once.js';
import { GatewayError } from '../errors/gateway-error.js';

/** One uploaded file, written to a private temporary file while it arrived (never held whole in memory). */
export interface SpooledFile {
  field: string;
  filename: string;
  contentType: string;
  path: string;
  size: number;
}

export interface MultipartLimits {
  /** Largest file accepted, in bytes; one byte more is refused with 413. */
  maxFileBytes: number;
  /** Most files in one form. */
  maxFiles: number;
  /** The field names that may carry files (`file`, `image`, `image[]`, `mask`); any other file part is refused. */
  fileFields: ReadonlySet<string>;
  /** Most non-file fields, and the longest one in bytes. */
  maxFields: number;
  maxFieldBytes: number;
  /** Where files are spooled (the operating system's temporary directory by default). */
  spoolDirectory: string;
}

/** Room for the form's own framing and text fields on top of the files, for the Content-Length precheck. */
const FORM_OVERHEAD_BYTES = 1024 * 1024;

/** A parsed form: text fields in order, files on disk. `dispose` removes the files (idempotent). */
export class MultipartForm {
  readonly fields: Array<{ name: string; value: string }> = [];
  readonly files: SpooledFile[] = [];
  #disposed = false;

  /** The last value of a field (HTML forms repeat names; the last wins, as in OpenAI's API). */
  field(name: string): string | undefined {
    for (let index = this.fields.length - 1; index >= 0; index -= 1) {
      const entry = this.fields[index] as { name: string; value: string };
      if (entry.name === name) return entry.value;
    }
    return undefined;
  }

  async dispose(): Promise<void> {
    if (this.#disposed) return;
    this.#disposed = true;
    await Promise.all(this.files.map((file) => rm(file.path, { force: true }).catch(() => undefined)));
  }
}

function badForm(message: string, param?: string): GatewayError {
  return new GatewayError('bad_request', message, param === undefined ? {} : { param });
}

function fileTooLarge(limit: number): GatewayError {
  return new GatewayError('payload_too_large', `The uploaded file is larger than the limit of ${limit} bytes (${Math.round(limit / 1024 / 1024)} MB).`, { param: 'file' });
}

/** `multipart/form-data; boundary=…`, else 400 naming what was sent. */
function checkContentType(contentType: string | undefined): void {
  if (contentType === undefined || !/^multipart\/form-data\s*;/i.test(contentType) || !/;\s*boundary=/i.test(contentType)) {
    const sent = contentType === undefined ? 'no Content-Type' : `Content-Type '${contentType.split(';')[0] ?? ''}'`;
    throw badForm(`This endpoint takes a multipart/form-data body with a boundary; the request has ${sent}.`);
  }
}

/** What is refused from the headers alone: another Content-Type, or a declared length past what the limits allow. */
function checkHeaders(request: IncomingMessage, limits: MultipartLimits): void {
  checkContentType(request.headers['content-type']);
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > limits.maxFiles * limits.maxFileBytes + FORM_OVERHEAD_BYTES) throw fileTooLarge(limits.maxFileBytes);
}

/** The form parser, loaded by the first multipart request (uploads, audio, image edits). */
const parserModule = loadOnce(async () => (await import('busboy')).default);

/** The form parser for the request, bounded by `limits`; 400 when its Content-Type cannot be read. */
async function openParser(request: IncomingMessage, limits: MultipartLimits): Promise<busboy.Busboy> {
  const parse = parserModule.loaded() ?? await parserModule.get();
  try {
    return parse({
      headers: request.headers,
      defParamCharset: 'utf8',
      // busboy signals 'limit' on reaching fileSize, so one byte more than allowed is what trips it.
      limits: { fileSize: limits.maxFileBytes + 1, files: limits.maxFiles, fields: limits.maxFields, fieldSize: limits.maxFieldBytes, parts: limits.maxFiles + limits.maxFields, headerPairs: 64 },
    });
  } catch {
    throw badForm('The multipart/form-data body cannot be read: its Content-Type header is malformed.');
  }
}

/** An uploaded file's record, before its first byte: its own private temporary file (random name) in `directory`. */
function spooledFile(field: string, info: busboy.FileInfo, directory: string): SpooledFile {
  return {
    field,
    filename: info.filename === undefined || info.filename === '' ? 'file' : path.basename(info.filename),
    contentType: info.mimeType === '' ? 'application/octet-stream' : info.mimeType,
    path: path.join(directory, `unigate-upload-${randomUUID()}`),
    size: 0,
  };
}

/**
 * Streams a multipart/form-data request into a form: fields in memory (bounded), each file straight to a temporary
 * file with backpressure, counted as it arrives. A declared Content-Length past what the limits allow is refused
 * with 413 before anything is read; a file that grows past `maxFileBytes` is refused with 413 the moment it does,
 * and the rest of the upload is read and discarded (memory stays flat). Malformed forms answer 400. Whatever was
 * spooled is removed when parsing fails; on success the caller owns the form and must `dispose` it.
 */
export async function readMultipartForm(request: IncomingMessage, limits: MultipartLimits): Promise<MultipartForm> {
  checkHeaders(request, limits);
  const parser = await openParser(request, limits);
  const form = new MultipartForm();
  const active = new Set<{ source: Readable; sink: Writable }>();
  const writes: Array<Promise<void>> = [];
  let failure: GatewayError | null = null;

  const outcome = new Promise<void>((resolve, reject) => {
    const fail = (error: GatewayError): void => {
      if (failure !== null) return;
      failure = error;
      request.unpipe(parser);
      // Read out and drop what the client still sends, so it gets the answer and memory stays flat.
      request.resume();
      // Both ends explicitly: a pipeline whose source is destroyed mid-write does not always close its sink. With the
      // failure as their error: a pipeline whose streams are destroyed without one never settles on Node 22+.
      for (const { source, sink } of active) {
        source.destroy(error);
        sink.destroy(error);
      }
      // The listener reads and drops the rest of the body (within a budget) before it answers.
      void Promise.allSettled(writes).then(() => reject(error));
    };
    parser.on('file', (name: string, stream: Readable, info: busboy.FileInfo) => {
      if (failure !== null) {
        stream.resume();
        return;
      }
      if (!limits.fileFields.has(name)) {
        stream.resume();
        fail(badForm(`Unexpected file field '${name}'.`, name));
        return;
      }
      const file = spooledFile(name, info, limits.spoolDirectory);
      form.files.push(file);
      const sink = createWriteStream(file.path, { flags: 'wx', mode: 0o600 });
      const transfer = { source: stream, sink };
      active.add(transfer);
      stream.on('data', (chunk: Buffer) => {
        file.size += chunk.length;
      });
      stream.once('limit', () => fail(fileTooLarge(limits.maxFileBytes)));
      writes.push(
        pipeline(stream, sink)
          .catch(() => {
            if (failure === null) fail(new GatewayError('internal_error', 'The upload could not be stored for forwarding.'));
          })
          .finally(() => active.delete(transfer)),
      );
    });
    parser.on('field', (name: string, value: string, info: busboy.FieldInfo) => {
      if (failure !== null) return;
      if (info.nameTruncated || info.valueTruncated) {
        fail(badForm(`Form field '${name}' is longer than ${limits.maxFieldBytes} bytes.`, name));
        return;
      }
      form.fields.push({ name, value });
    });
    parser.on('filesLimit', () => fail(badForm(`At most ${limits.maxFiles} file(s) may be uploaded in one request.`)));
    parser.on('fieldsLimit', () => fail(badForm(`At most ${limits.maxFields} form fields are accepted.`)));
    parser.on('partsLimit', () => fail(badForm('The form has too many parts.')));
    parser.on('error', () => fail(badForm('The multipart/form-data body is malformed.')));
    parser.on('close', () => {
      void Promise.allSettled(writes).then(() => {
        if (failure === null) resolve();
      });
    });
    request.on('aborted', () => fail(new GatewayError('bad_request', 'The client closed the request.', { status: 499 })));
    request.on('error', () => fail(new GatewayError('bad_request', 'The client closed the request.', { status: 499 })));
    request.pipe(parser);
  });
  try {
    await outcome;
  } catch (error) {
    await form.dispose();
    throw error;
  }
  return form;
}
