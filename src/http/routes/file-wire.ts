import type { StoredFile } from '../../domain/files.js';
import { GatewayError } from '../../errors/gateway-error.js';

const seconds = (ms: number): number => Math.floor(ms / 1000);

/** A file as OpenAI's `File` object. */
export function fileObject(file: StoredFile): Record<string, unknown> {
  return {
    id: file.id,
    object: 'file',
    bytes: file.bytes,
    created_at: seconds(file.createdAt),
    filename: file.filename,
    purpose: file.purpose,
    status: 'processed',
    ...(file.expiresAt === null ? {} : { expires_at: seconds(file.expiresAt) }),
  };
}

export interface ListQuery {
  limit: number;
  order: 'asc' | 'desc';
  after?: string;
}

/** `limit` (1 to `max`, default `fallback`), `order` (`asc` or `desc`, default `desc`) and `after` of a cursor list. */
export function readListQuery(query: URLSearchParams, fallback: number, max: number): ListQuery {
  const rawLimit = query.get('limit');
  const limit = rawLimit === null ? fallback : /^\d{1,6}$/.test(rawLimit) ? Number(rawLimit) : Number.NaN;
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw new GatewayError('bad_request', `'limit' must be an integer from 1 to ${max}.`, { param: 'limit' });
  const order = query.get('order') ?? 'desc';
  if (order !== 'asc' && order !== 'desc') throw new GatewayError('bad_request', '\'order\' must be \'asc\' or \'desc\'.', { param: 'order' });
  const after = query.get('after');
  return { limit, order, ...(after === null || after === '' ? {} : { after }) };
}
