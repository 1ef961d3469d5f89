import type { ApiKey } from '../domain/records.js';
import { GatewayError } from '../errors/gateway-error.js';
import { sendError } from './respond.js';
import type { RequestContext } from './request-context.js';

/** Keyless endpoints any web page may read (spec: public metadata). Model lists also answer keyed callers. */
const PUBLIC_PATHS = new Set(['/v1/models', '/v1beta/models', '/api/status', '/api/fx/latest']);
const PUBLIC_PREFIXES = ['/api/public/'];

/** Response headers a browser page allowed to call with a key may read. */
const EXPOSED_HEADERS = [
  'x-request-id', 'retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-dimension',
  'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests',
  'x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens',
  ...['requests', 'tokens', 'input-tokens', 'output-tokens'].flatMap((kind) => ['limit', 'remaining', 'reset'].map((part) => `anthropic-ratelimit-${kind}-${part}`)),
  'x-request-cost-usd',
].join(', ');

const PREFLIGHT_MAX_AGE_SECONDS = '600';

export function isPublicPath(path: string): boolean {
  return PUBLIC_PATHS.has(path) || PUBLIC_PREFIXES.some((prefix) => path.startsWith(prefix));
}

/**
 * True when a browser sent the request on a page's behalf: browsers add `Origin` to cross-origin fetches and
 * `Sec-Fetch-Site` (fetch metadata) to every request they make. Servers and SDKs send neither; Node's own fetch sends
 * `Sec-Fetch-Mode` but never `Sec-Fetch-Site`, so it is not taken for a browser.
 */
export function sentByBrowser(context: RequestContext): boolean {
  const headers = context.request.headers;
  return typeof headers.origin === 'string' && headers['sec-fetch-site'] !== undefined;
}

/** Whether any usable key lists this origin (for preflights, which carry no key). */
export type OriginLookup = (origin: string) => Promise<boolean>;

function requestedHeaders(context: RequestContext): string {
  const requested = context.request.headers['access-control-request-headers'];
  return typeof requested === 'string' ? requested : '';
}

/** A preflight's 204 granting `origin` (`*`, or a listed origin, answered per origin) the methods and the headers asked for. */
function allowPreflight(context: RequestContext, origin: string, methods: string): void {
  const response = context.response;
  response.statusCode = 204;
  response.setHeader('access-control-allow-origin', origin);
  if (origin !== '*') response.setHeader('vary', 'Origin');
  response.setHeader('access-control-allow-methods', methods);
  const headers = requestedHeaders(context);
  if (headers !== '') response.setHeader('access-control-allow-headers', headers);
  response.setHeader('access-control-max-age', PREFLIGHT_MAX_AGE_SECONDS);
  response.end();
}

function browserRefusal(): GatewayError {
  return new GatewayError('browser_access_denied',
    'API keys belong on a server: this gateway refuses keyed requests sent by a web browser, because anyone who can load the page could copy the key. '
    + 'Call the API from your backend, or ask the operator to list this page\'s origin on a key meant for browsers.');
}

/**
 * The API listener's browser policy. Public endpoints: any origin, preflight answered, `Access-Control-Allow-Origin: *`.
 * Keyed endpoints: a preflight gets permission only for an origin some key lists, and a keyed request from a browser
 * (see `sentByBrowser`) is refused with 403 `browser_access_denied` unless its key lists the page's origin.
 */
export class CorsPolicy {
  readonly #cache = new Map<string, { allowed: boolean; at: number }>();

  constructor(private readonly originListed: OriginLookup, private readonly cacheMs = 5000) {}

  /** Answers an OPTIONS request. */
  async preflight(context: RequestContext): Promise<void> {
    const origin = context.request.headers.origin;
    if (isPublicPath(context.path)) {
      allowPreflight(context, '*', 'GET, OPTIONS');
      return;
    }
    if (typeof origin === 'string' && await this.#listed(origin)) {
      allowPreflight(context, origin, 'GET, POST, DELETE, OPTIONS');
      return;
    }
    sendError(context, browserRefusal());
  }

  /** Before a public endpoint's handler: any page may read the answer. */
  allowAnyOrigin(context: RequestContext): void {
    context.response.setHeader('access-control-allow-origin', '*');
  }

  /** Keys changed: preflights ask storage again. */
  forget(): void {
    this.#cache.clear();
  }

  async #listed(origin: string): Promise<boolean> {
    const now = Date.now();
    const cached = this.#cache.get(origin);
    if (cached !== undefined && now - cached.at < this.cacheMs) return cached.allowed;
    const allowed = await this.originListed(origin);
    if (this.#cache.size > 10_000) this.#cache.clear();
    this.#cache.set(origin, { allowed, at: now });
    return allowed;
  }
}

/**
 * After the key is verified: a browser-sent request passes only from an origin the key lists (then the page may
 * read the answer and its rate-limit headers); otherwise 403 `browser_access_denied`, readable by the page.
 */
export function enforceBrowserPolicy(context: RequestContext, key: ApiKey): void {
  if (!sentByBrowser(context)) return;
  const origin = context.request.headers.origin as string;
  const response = context.response;
  response.setHeader('access-control-allow-origin', origin);
  response.setHeader('vary', 'Origin');
  if (key.allowedOrigins === null || !key.allowedOrigins.includes(origin)) throw browserRefusal();
  response.setHeader('access-control-expose-headers', EXPOSED_HEADERS);
}
