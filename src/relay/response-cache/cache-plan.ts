import { GatewayError } from '../../errors/gateway-error.js';
import type { ChatRequest } from '../../ir/chat-request.js';
import type { ModelCachePolicy } from '../../domain/model-records.js';
import { responseCacheKey } from './cache-key.js';

/** Request header: `on` asks for the cache on a model without its own policy, `off` keeps the request out of it. */
export const CACHE_HEADER = 'x-gateway-cache';
/** Request header: how long this request's answer stays cached, in seconds. */
export const CACHE_TTL_HEADER = 'x-gateway-cache-ttl';
/** The policy of a request that asks for the cache on a model without one: five minutes, hits free, per account. */
export const REQUEST_CACHE_DEFAULTS: ModelCachePolicy = { ttlSeconds: 300, hitPriceBasisPoints: 0, shared: false };
/** Longest TTL a request may ask for (a week). */
const MAX_REQUEST_TTL_SECONDS = 604_800;
/** The namespace of a model whose policy shares entries between accounts. */
const SHARED_NAMESPACE = 'shared';

type Headers = Record<string, string | string[] | undefined>;

/** What the cache does for one request: `key` null means the request is answered without it (`bypass`). */
export interface CachePlan {
  key: string | null;
  /** Look for a stored answer (false under `Cache-Control: no-cache`). */
  lookup: boolean;
  /** Store the answer (false under `no-store`). */
  store: boolean;
  ttlMs: number;
  hitPriceBasisPoints: number;
}

function single(headers: Headers, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function optIn(headers: Headers): boolean | null {
  const raw = single(headers, CACHE_HEADER)?.trim().toLowerCase();
  if (raw === undefined || raw === '') return null;
  if (raw === 'on' || raw === 'true') return true;
  if (raw === 'off' || raw === 'false') return false;
  throw new GatewayError('bad_request', `'${CACHE_HEADER}' must be 'on' or 'off'.`, { param: CACHE_HEADER });
}

function requestTtlSeconds(headers: Headers): number | null {
  const raw = single(headers, CACHE_TTL_HEADER)?.trim();
  if (raw === undefined || raw === '') return null;
  const seconds = /^\d{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(seconds >= 1 && seconds <= MAX_REQUEST_TTL_SECONDS)) {
    throw new GatewayError('bad_request', `'${CACHE_TTL_HEADER}' must be a whole number of seconds from 1 to ${MAX_REQUEST_TTL_SECONDS}.`, { param: CACHE_TTL_HEADER });
  }
  return seconds;
}

function cacheControl(headers: Headers): { noCache: boolean; noStore: boolean } {
  const directives = (single(headers, 'cache-control') ?? '').toLowerCase().split(',').map((directive) => directive.trim());
  return { noCache: directives.includes('no-cache'), noStore: directives.includes('no-store') };
}

/**
 * The cache's part in a chat request, from the model's policy and the caller's headers; null when the cache has no
 * part (the model has no policy and the caller did not ask), so the answer carries no cache header. Malformed cache
 * headers are a 400 in the caller's shape. The request is decoded to its canonical form only when the cache applies.
 */
export function planResponseCache(policy: ModelCachePolicy | null, headers: Headers, accountId: string, modelId: string, chat: () => ChatRequest): CachePlan | null {
  // No policy and neither cache header: the cache has no part, and there is no header to refuse.
  if (policy === null && headers[CACHE_HEADER] === undefined && headers[CACHE_TTL_HEADER] === undefined) return null;
  const asked = optIn(headers);
  const ttlSeconds = requestTtlSeconds(headers);
  const effective = policy ?? (asked === true ? REQUEST_CACHE_DEFAULTS : null);
  if (effective === null) return null;
  const ttlMs = (ttlSeconds ?? effective.ttlSeconds) * 1000;
  const bypass: CachePlan = { key: null, lookup: false, store: false, ttlMs, hitPriceBasisPoints: effective.hitPriceBasisPoints };
  const { noCache, noStore } = cacheControl(headers);
  if (asked === false || noStore) return bypass;
  let key: string | null;
  try {
    key = responseCacheKey(effective.shared ? SHARED_NAMESPACE : `account:${accountId}`, modelId, chat());
  } catch {
    // A request the canonical form cannot hold (several choices, say) goes upstream as it came, uncached.
    return bypass;
  }
  return key === null ? bypass : { key, lookup: !noCache, store: true, ttlMs, hitPriceBasisPoints: effective.hitPriceBasisPoints };
}
