import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { keepFile } from '../../batches/keep-file.js';
import type { FileUpload, StoredFile } from '../../domain/files.js';
import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';
import { newId } from '../../shared/ids.js';
import { authenticate } from '../authenticate.js';
import { readBody, readJsonObject } from '../read-body.js';
import type { RequestContext, RouteHandler } from '../request-context.js';
import { sendJson } from '../respond.js';
import { sendStream } from '../send-stream.js';
import { fileIdOf, geminiFileObject, originOf } from './gemini-file-wire.js';

/** Gemini keeps an uploaded file for 48 hours. */
export const GEMINI_FILE_LIFETIME_MS = 48 * 3_600_000;
/** An upload not finished within a day is abandoned and its chunks swept. */
const UPLOAD_LIFETIME_MS = 24 * 3_600_000;
/** The SDK sends 8 MiB chunks; a chunk may be at most twice that. */
const MAX_CHUNK_BYTES = 16 * 1024 * 1024;
const LIST_DEFAULT = 10;
const LIST_MAX = 100;
const DISPLAY_NAME_MAX = 512;

const badRequest = (message: string, param: string): GatewayError => new GatewayError('bad_request', message, { param });
const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const header = (context: RequestContext, name: string): string | undefined => {
  const value = context.request.headers[name];
  return Array.isArray(value) ? value[0] : value;
};

function notFound(name: string): GatewayError {
  return new GatewayError('not_found', `File '${name}' was not found.`, { param: 'name' });
}

/** The caller's file named in the path (another account's reads as absent). */
async function ownFile(services: GatewayServices, context: RequestContext, accountId: string): Promise<StoredFile> {
  const id = fileIdOf(context.params.id ?? '');
  const file = await services.storage.files.get(accountId, id, services.clock.now());
  if (file === null) throw notFound(`files/${id}`);
  return file;
}

/**
 * `POST /upload/v1beta/files`: Google's resumable upload protocol as `ai.files.upload` speaks it. The `start` command
 * (JSON `{file: {displayName?, mimeType?}}`, the size and type in `X-Goog-Upload-Header-Content-Length` / `-Type`)
 * answers the upload's URL in `X-Goog-Upload-URL`; each `upload` command to that URL sends the next chunk at
 * `X-Goog-Upload-Offset` (`active`), and the one with `finalize` keeps the file whole in the file store within the
 * account's quota and answers `{file}` (`final`). Chunks are kept in the database meanwhile, so any instance may
 * take any of them. `query` tells the bytes received; `cancel` drops the upload.
 */
export function geminiUploadRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const uploadId = context.query.get('upload_id');
    if (uploadId === null) return startUpload(services, context, account.id);
    return continueUpload(services, context, account.id, uploadId);
  };
}

async function startUpload(services: GatewayServices, context: RequestContext, accountId: string): Promise<void> {
  const protocol = header(context, 'x-goog-upload-protocol');
  if (protocol !== 'resumable') throw badRequest('Only the resumable upload protocol is supported (X-Goog-Upload-Protocol: resumable).', 'X-Goog-Upload-Protocol');
  if (header(context, 'x-goog-upload-command') !== 'start') throw badRequest('A new upload starts with X-Goog-Upload-Command: start.', 'X-Goog-Upload-Command');
  const body = await readJsonObject(context, 64 * 1024);
  const file = isObject(body.file) ? body.file : {};
  const rawSize = header(context, 'x-goog-upload-header-content-length') ?? (typeof file.sizeBytes === 'string' ? file.sizeBytes : undefined);
  const size = rawSize !== undefined && /^\d{1,15}$/.test(rawSize) ? Number(rawSize) : Number.NaN;
  if (!Number.isSafeInteger(size) || size < 1) throw badRequest('X-Goog-Upload-Header-Content-Length must give the file\'s size in bytes.', 'X-Goog-Upload-Header-Content-Length');
  const { maxFileBytes } = services.config.batches;
  if (size > maxFileBytes) throw new GatewayError('payload_too_large', `The file is ${size} bytes; files may be at most ${maxFileBytes} bytes.`, { param: 'file' });
  const mimeType = header(context, 'x-goog-upload-header-content-type') ?? (typeof file.mimeType === 'string' ? file.mimeType : '');
  if (!/^[\w.+-]+\/[\w.+-]+$/.test(mimeType) || mimeType.length > 255) throw badRequest('The file\'s MIME type is required (X-Goog-Upload-Header-Content-Type).', 'file.mimeType');
  const displayName = typeof file.displayName === 'string' ? file.displayName.slice(0, DISPLAY_NAME_MAX)
    : (header(context, 'x-goog-upload-file-name') ?? 'upload').slice(0, DISPLAY_NAME_MAX);
  const now = services.clock.now();
  const upload: FileUpload = { id: newId('upload', now), accountId, displayName, mimeType, declaredBytes: size, receivedBytes: 0, createdAt: now, expiresAt: now + UPLOAD_LIFETIME_MS };
  await services.storage.fileUploads.create(upload);
  const apiVersion = context.path.startsWith('/upload/v1/') ? 'v1' : 'v1beta';
  context.response.setHeader('x-goog-upload-url', `${originOf(context.request.headers)}/upload/${apiVersion}/files?upload_id=${upload.id}&upload_protocol=resumable`);
  context.response.setHeader('x-goog-upload-status', 'active');
  context.response.setHeader('x-goog-upload-control-url', `${originOf(context.request.headers)}/upload/${apiVersion}/files?upload_id=${upload.id}&upload_protocol=resumable`);
  sendJson(context, 200, {});
}

async function continueUpload(services: GatewayServices, context: RequestContext, accountId: string, uploadId: string): Promise<void> {
  const now = services.clock.now();
  const upload = await services.storage.fileUploads.get(accountId, uploadId, now);
  if (upload === null) throw new GatewayError('not_found', 'No such upload (it finished, was cancelled or was abandoned).', { param: 'upload_id' });
  const commands = (header(context, 'x-goog-upload-command') ?? '').split(',').map((command) => command.trim()).filter((command) => command !== '');
  const status = (value: string, received: number): void => {
    context.response.setHeader('x-goog-upload-status', value);
    context.response.setHeader('x-goog-upload-size-received', String(received));
  };
  if (commands.includes('cancel')) {
    await services.storage.fileUploads.delete(upload.id);
    status('cancelled', upload.receivedBytes);
    sendJson(context, 200, {});
    return;
  }
  if (commands.includes('query')) {
    status('active', upload.receivedBytes);
    sendJson(context, 200, {});
    return;
  }
  let received = upload.receivedBytes;
  if (commands.includes('upload')) {
    const rawOffset = header(context, 'x-goog-upload-offset');
    const offset = rawOffset !== undefined && /^\d{1,15}$/.test(rawOffset) ? Number(rawOffset) : Number.NaN;
    if (offset !== upload.receivedBytes) throw badRequest(`X-Goog-Upload-Offset must be ${upload.receivedBytes}, the bytes received so far.`, 'X-Goog-Upload-Offset');
    const chunk = await readBody(context, Math.min(MAX_CHUNK_BYTES, upload.declaredBytes - offset));
    if (!(await services.storage.fileUploads.append(accountId, upload.id, offset, chunk))) {
      throw badRequest('Another chunk was received at this offset first.', 'X-Goog-Upload-Offset');
    }
    received = offset + chunk.byteLength;
  } else if (!commands.includes('finalize')) {
    throw badRequest('X-Goog-Upload-Command must be upload, finalize, query or cancel.', 'X-Goog-Upload-Command');
  }
  if (!commands.includes('finalize')) {
    status('active', received);
    sendJson(context, 200, {});
    return;
  }
  if (received !== upload.declaredBytes) throw badRequest(`The upload has ${received} of the ${upload.declaredBytes} bytes declared.`, 'X-Goog-Upload-Offset');
  // One finalize makes the file: a repeated or racing one finds the upload gone.
  if (!(await services.storage.fileUploads.claim(accountId, upload.id, now))) throw new GatewayError('not_found', 'No such upload (it finished, was cancelled or was abandoned).', { param: 'upload_id' });
  const file = await finishUpload(services, upload, now);
  status('final', received);
  sendJson(context, 200, { file: geminiFileObject(file, originOf(context.request.headers)) });
}

/** Joins the chunks on local disk, keeps the file in the store within the quota, and drops the upload. */
async function finishUpload(services: GatewayServices, upload: FileUpload, now: number): Promise<StoredFile> {
  const directory = await mkdtemp(path.join(tmpdir(), 'unigate-upload-'));
  try {
    const spooled = path.join(directory, 'content');
    await pipeline(services.storage.fileUploads.chunks(upload.id), createWriteStream(spooled));
    const file: StoredFile = {
      id: newId('file', now), accountId: upload.accountId, purpose: 'user_data', filename: upload.displayName, bytes: upload.declaredBytes,
      store: services.storage.fileContents.name, createdAt: now, expiresAt: now + GEMINI_FILE_LIFETIME_MS, mimeType: upload.mimeType,
    };
    await keepFile(services.storage, file, { path: spooled, bytes: upload.declaredBytes }, services.config.batches.accountQuotaBytes);
    await services.storage.fileUploads.delete(upload.id);
    return file;
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

/** `GET /v1beta/files/{id}`: the caller's file as Gemini's `File`; `files/{id}:download` is the download (under /v1/). */
export function getGeminiFileRoute(services: GatewayServices): RouteHandler {
  const download = downloadGeminiFileRoute(services);
  return async (context) => {
    const id = context.params.id ?? '';
    if (id.endsWith(':download')) {
      context.params = { ...context.params, id: id.slice(0, -':download'.length) };
      return download(context);
    }
    const { account } = await authenticate(context, services);
    sendJson(context, 200, geminiFileObject(await ownFile(services, context, account.id), originOf(context.request.headers)));
  };
}

/** `GET /v1beta/files`: the caller's files, newest first, `{files, nextPageToken}` (`pageSize` 1 to 100, default 10). */
export function listGeminiFilesRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const rawSize = context.query.get('pageSize');
    const limit = rawSize === null || rawSize === '0' ? LIST_DEFAULT : /^\d{1,4}$/.test(rawSize) ? Math.min(Number(rawSize), LIST_MAX) : Number.NaN;
    if (!Number.isInteger(limit) || limit < 1) throw badRequest(`pageSize: must be an integer from 1 to ${LIST_MAX}.`, 'pageSize');
    const token = context.query.get('pageToken') ?? '';
    const rows = await services.storage.files.list({ accountId: account.id, order: 'desc', limit, now: services.clock.now(), ...(token === '' ? {} : { after: token }) });
    const origin = originOf(context.request.headers);
    const page = rows.slice(0, limit);
    sendJson(context, 200, { ...(page.length === 0 ? {} : { files: page.map((file) => geminiFileObject(file, origin)) }), ...(rows.length > limit ? { nextPageToken: page.at(-1)?.id } : {}) });
  };
}

/** `DELETE /v1beta/files/{id}`: the caller's file and its bytes (`{}`). */
export function deleteGeminiFileRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const file = await ownFile(services, context, account.id);
    if (!(await services.storage.files.delete(account.id, file.id))) throw notFound(`files/${file.id}`);
    await services.storage.fileContents.delete([file.id]);
    sendJson(context, 200, {});
  };
}

/** `GET /v1beta/files/{id}:download?alt=media`: the caller's file's bytes, streamed from the store. */
export function downloadGeminiFileRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const file = await ownFile(services, context, account.id);
    const content = await services.storage.fileContents.open(file.id);
    if (content === null) throw notFound(`files/${file.id}`);
    await sendStream(context, 200, content, { 'content-type': file.mimeType ?? 'application/octet-stream', 'content-length': String(file.bytes) });
  };
}
