import { sign } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { UpstreamTransport } from '../upstream-adapter.js';
import { UpstreamAuthorizationError } from '../upstream-authorization-error.js';
import type { ServiceAccount } from './service-account.js';

export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';
/** A token is renewed this long before it expires, so none expires in flight. */
export const REFRESH_MARGIN_MS = 5 * 60_000;
const ASSERTION_LIFETIME_SECONDS = 3600;
const TOKEN_TIMEOUTS = { firstByteMs: 30_000, idleMs: 30_000 };
const MAX_ERROR_BYTES = 4096;
/** Service-account keys remembered at once (a gateway has a handful). */
const MAX_ENTRIES = 256;

interface CachedToken {
  token: string;
  expiresAt: number;
}

interface Entry {
  current: CachedToken | null;
  /** The token request in flight: every caller that needs a token meanwhile waits for this one. */
  pending: Promise<CachedToken> | null;
}

function base64url(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

/** The service account's signed JWT assertion (RS256), valid for an hour from `nowSeconds`. */
export function signAssertion(account: ServiceAccount, nowSeconds: number): string {
  const header = { alg: 'RS256', typ: 'JWT', ...(account.privateKeyId === null ? {} : { kid: account.privateKeyId }) };
  const claims = { iss: account.clientEmail, scope: CLOUD_PLATFORM_SCOPE, aud: account.tokenUri, iat: nowSeconds, exp: nowSeconds + ASSERTION_LIFETIME_SECONDS };
  const unsigned = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
  return `${unsigned}.${sign('RSA-SHA256', Buffer.from(unsigned), account.privateKey).toString('base64url')}`;
}

async function readBody(body: AsyncIterable<Buffer>, limit: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < limit) chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * OAuth access tokens of Google service accounts (the JWT-bearer grant at the key's `token_uri`), cached per key
 * until shortly before they expire. Concurrent requests share one token request; a token the upstream refused
 * (401) is replaced once, however many requests saw it refused.
 */
export class AccessTokenCache {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly http: UpstreamTransport,
    private readonly clock: Clock,
  ) {}

  /** A valid token for `account` (`cacheKey` names it: its key file). `refused`: a token the upstream rejected. */
  async token(cacheKey: string, account: ServiceAccount, refused: string | null = null): Promise<string> {
    let entry = this.#entries.get(cacheKey);
    if (entry === undefined) {
      entry = { current: null, pending: null };
      if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
      this.#entries.set(cacheKey, entry);
    }
    const current = entry.current;
    if (current !== null && current.token !== refused && this.clock.now() < current.expiresAt - REFRESH_MARGIN_MS) return current.token;
    if (current !== null && current.token === refused) entry.current = null;
    entry.pending ??= this.#refresh(entry, account);
    return (await entry.pending).token;
  }

  async #refresh(entry: Entry, account: ServiceAccount): Promise<CachedToken> {
    try {
      const token = await this.#fetch(account);
      entry.current = token;
      return token;
    } finally {
      entry.pending = null;
    }
  }

  async #fetch(account: ServiceAccount): Promise<CachedToken> {
    const requestedAt = this.clock.now();
    const body = new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: signAssertion(account, Math.floor(requestedAt / 1000)) }).toString();
    let response;
    try {
      response = await this.http.send(
        { url: account.tokenUri, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body },
        { signal: AbortSignal.timeout(TOKEN_TIMEOUTS.firstByteMs + TOKEN_TIMEOUTS.idleMs), timeouts: TOKEN_TIMEOUTS },
      );
    } catch (error) {
      throw new UpstreamAuthorizationError('unreachable', 'The Google token endpoint could not be reached.', { cause: error });
    }
    const text = await readBody(response.body, MAX_ERROR_BYTES * 4).catch((error: unknown) => {
      throw new UpstreamAuthorizationError('unreachable', 'The Google token endpoint stopped answering.', { cause: error });
    });
    let parsed: Record<string, unknown> = {};
    try {
      const value = JSON.parse(text) as unknown;
      if (value !== null && typeof value === 'object' && !Array.isArray(value)) parsed = value as Record<string, unknown>;
    } catch {
      // judged by the status below
    }
    if (response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429) {
      const reason = typeof parsed.error === 'string' ? parsed.error : `HTTP ${response.status}`;
      throw new UpstreamAuthorizationError('rejected', `The Google token endpoint refused the service account (${reason}).`);
    }
    const token = parsed.access_token;
    const expiresIn = parsed.expires_in;
    if (response.status >= 300 || typeof token !== 'string' || token === '') {
      throw new UpstreamAuthorizationError('unreachable', `The Google token endpoint failed (HTTP ${response.status}).`);
    }
    const lifetimeMs = typeof expiresIn === 'number' && expiresIn > 0 ? expiresIn * 1000 : ASSERTION_LIFETIME_SECONDS * 1000;
    return { token, expiresAt: requestedAt + lifetimeMs };
  }
}
