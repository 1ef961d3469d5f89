import { keepFile } from '../../batches/keep-file.js';
import { UPLOAD_PURPOSES, FILE_PURPOSES, type FilePurpose, type StoredFile } from '../../domain/files.js';
import { GatewayError } from '../../errors/gateway-error.js';
import { readMultipartForm } from '../../multipart/read-multipart-form.js';
import { SPOOL_DIRECTORY } from '../../operations/media-route.js';
import type { GatewayServices } from '../../services.js';
import { newId } from '../../shared/ids.js';
import { authenticate } from '../authenticate.js';
import type { RequestContext, RouteHandler } from '../request-context.js';
import { sendJson } from '../respond.js';
import { sendStream } from '../send-stream.js';
import { fileObject, readListQuery } from './file-wire.js';

/** Expiry bounds of `expires_after.seconds` (OpenAI's: an hour to thirty days). */
export const MIN_EXPIRY_SECONDS = 3600;
export const MAX_EXPIRY_SECONDS = 30 * 86_400;
/** Files for batches expire after thirty days unless told otherwise; other files stay until deleted. */
export const BATCH_FILE_DEFAULT_EXPIRY_SECONDS = 30 * 86_400;

function badRequest(message: string, param: string): GatewayError {
  return new GatewayError('bad_request', message, { param });
}

/** `expires_after[anchor]` and `expires_after[seconds]` as the SDK sends them in a form; null when absent. */
export function readExpiresAfter(field: (name: string) => string | undefined, prefix: string): number | null {
  const anchor = field(`${prefix}[anchor]`);
  const seconds = field(`${prefix}[seconds]`);
  if (anchor === undefined && seconds === undefined) return null;
  if (anchor !== 'created_at') throw badRequest(`'${prefix}.anchor' must be 'created_at'.`, `${prefix}.anchor`);
  const value = seconds === undefined || !/^\d{1,10}$/.test(seconds) ? Number.NaN : Number(seconds);
  if (!Number.isInteger(value) || value < MIN_EXPIRY_SECONDS || value > MAX_EXPIRY_SECONDS) {
    throw badRequest(`'${prefix}.seconds' must be an integer from ${MIN_EXPIRY_SECONDS} to ${MAX_EXPIRY_SECONDS}.`, `${prefix}.seconds`);
  }
  return value;
}

function notFound(fileId: string): GatewayError {
  return new GatewayError('not_found', `No such file: '${fileId}'.`, { param: 'file_id' });
}

/** The caller's own file, or 404 (another account's file reads as absent). */
async function ownFile(services: GatewayServices, context: RequestContext, accountId: string): Promise<StoredFile> {
  const fileId = context.params.id ?? '';
  const file = await services.storage.files.get(accountId, fileId, services.clock.now());
  if (file === null) throw notFound(fileId);
  return file;
}

/**
 * `POST /v1/files`: a multipart upload (`file`, `purpose`, optional `expires_after`), kept whole in the file store
 * once it fits the size limit and the account's quota. Returns the file object.
 */
export function uploadFileRoute(services: GatewayServices): RouteHandler {
  const { maxFileBytes } = services.config.batches;
  const limits = { maxFileBytes, maxFiles: 1, fileFields: new Set(['file']), maxFields: 8, maxFieldBytes: 1024, spoolDirectory: SPOOL_DIRECTORY };
  return async (context) => {
    const { account } = await authenticate(context, services);
    const form = await readMultipartForm(context.request, limits);
    try {
      const purpose = form.field('purpose');
      if (purpose === undefined) throw badRequest('\'purpose\' is required.', 'purpose');
      if (!(UPLOAD_PURPOSES as readonly string[]).includes(purpose)) throw badRequest(`'purpose' must be one of ${UPLOAD_PURPOSES.join(', ')}.`, 'purpose');
      const upload = form.files[0];
      if (upload === undefined) throw badRequest('\'file\' is required.', 'file');
      const expirySeconds = readExpiresAfter((name) => form.field(name), 'expires_after') ?? (purpose === 'batch' ? BATCH_FILE_DEFAULT_EXPIRY_SECONDS : null);
      const now = services.clock.now();
      const file: StoredFile = {
        id: newId('file', now), accountId: account.id, purpose: purpose as FilePurpose, filename: upload.filename.slice(0, 255), bytes: upload.size,
        store: services.storage.fileContents.name, createdAt: now, expiresAt: expirySeconds === null ? null : now + expirySeconds * 1000,
      };
      // The spooled upload goes to the store from disk (a bucket receives it as a stream).
      await keepFile(services.storage, file, { path: upload.path, bytes: upload.size }, services.config.batches.accountQuotaBytes);
      sendJson(context, 200, fileObject(file));
    } finally {
      await form.dispose();
    }
  };
}

/** `GET /v1/files`: the caller's files, newest first by default, by cursor (`after`, `limit`, `order`, `purpose`). */
export function listFilesRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const query = readListQuery(context.query, 10_000, 10_000);
    const purpose = context.query.get('purpose') ?? undefined;
    if (purpose !== undefined && !(FILE_PURPOSES as readonly string[]).includes(purpose)) throw badRequest(`'purpose' must be one of ${FILE_PURPOSES.join(', ')}.`, 'purpose');
    const rows = await services.storage.files.list({
      accountId: account.id, order: query.order, limit: query.limit, now: services.clock.now(),
      ...(query.after === undefined ? {} : { after: query.after }), ...(purpose === undefined ? {} : { purpose: purpose as FilePurpose }),
    });
    const data = rows.slice(0, query.limit).map(fileObject);
    sendJson(context, 200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > query.limit });
  };
}

/** `GET /v1/files/{id}`: the caller's file object. */
export function getFileRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    sendJson(context, 200, fileObject(await ownFile(services, context, account.id)));
  };
}

/** `GET /v1/files/{id}/content`: the caller's file's bytes. */
export function fileContentRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const file = await ownFile(services, context, account.id);
    const content = await services.storage.fileContents.open(file.id);
    if (content === null) throw notFound(file.id);
    const filename = file.filename.replace(/[^\w.\- ]/g, '_');
    await sendStream(context, 200, content, { 'content-type': 'application/octet-stream', 'content-length': String(file.bytes), 'content-disposition': `attachment; filename="${filename}"` });
  };
}

/** `DELETE /v1/files/{id}`: the caller's file and its bytes. */
export function deleteFileRoute(services: GatewayServices): RouteHandler {
  return async (context) => {
    const { account } = await authenticate(context, services);
    const fileId = context.params.id ?? '';
    if (!(await services.storage.files.delete(account.id, fileId))) throw notFound(fileId);
    await services.storage.fileContents.delete([fileId]);
    sendJson(context, 200, { id: fileId, object: 'file', deleted: true });
  };
}
