import { GatewayError } from '../errors/gateway-error.js';
import type { Page, PageRequest } from '../domain/records.js';

export function pageRequestFrom(query: URLSearchParams): PageRequest {
  const rawLimit = query.get('limit');
  const limit = rawLimit === null ? 50 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) throw new GatewayError('bad_request', "'limit' must be an integer from 1 to 200.", { param: 'limit' });
  return { limit, after: query.get('cursor') ?? query.get('after') };
}

export function pageJson<T, Json>(page: Page<T>, toJson: (item: T) => Json): { object: 'list'; data: Json[]; has_more: boolean; next_cursor: string | null } {
  return { object: 'list', data: page.data.map(toJson), has_more: page.nextCursor !== null, next_cursor: page.nextCursor };
}
