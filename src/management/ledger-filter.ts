import { GatewayError } from '../errors/gateway-error.js';
import type { LedgerListFilter } from '../storage/storage.js';
import { timeInput } from './time-input.js';

/** A ledger kind as stored: lowercase words joined by underscores. */
const KIND = /^[a-z][a-z_]{0,63}$/;

function time(query: URLSearchParams, name: 'from' | 'to'): number | undefined {
  const raw = query.get(name);
  if (raw === null || raw === '') return undefined;
  const parsed = timeInput.safeParse(/^\d+$/.test(raw) ? Number(raw) : raw);
  if (!parsed.success) throw new GatewayError('bad_request', `'${name}' must be an ISO 8601 time or Unix seconds.`, { param: name });
  return parsed.data;
}

/**
 * The ledger listing's filters: `order` (`asc`, the default, or `desc`: newest first), `kind` (one or more kinds,
 * comma-separated), `from` and `to` (ISO 8601 or Unix seconds; `to` inclusive).
 */
export function ledgerFilterFrom(query: URLSearchParams): LedgerListFilter {
  const filter: LedgerListFilter = {};
  const order = query.get('order');
  if (order !== null && order !== '') {
    if (order !== 'asc' && order !== 'desc') throw new GatewayError('bad_request', "'order' must be asc or desc.", { param: 'order' });
    filter.order = order;
  }
  const kind = query.get('kind');
  if (kind !== null && kind !== '') {
    const kinds = kind.split(',').map((part) => part.trim());
    if (kinds.some((part) => !KIND.test(part))) throw new GatewayError('bad_request', "'kind' must be ledger kinds separated by commas (such as topup,correction).", { param: 'kind' });
    filter.kinds = kinds;
  }
  const from = time(query, 'from');
  const to = time(query, 'to');
  if (from !== undefined) filter.from = from;
  if (to !== undefined) filter.to = to + 1;
  if (from !== undefined && to !== undefined && from > to) throw new GatewayError('bad_request', "'from' must not be after 'to'.", { param: 'from' });
  return filter;
}
