import { isIP } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import type { Clock } from '../shared/clock.js';
import type { McpServer, McpServerRepository } from '../storage/repositories/mcp-server-repository.js';
import { addressCheckedLookup, hostRefusal } from '../webhooks/endpoint-address.js';

/** The token endpoint refused the client credentials, failed, or answered something that is no access token. */
export class UpstreamAuthorizationFailed extends Error {
  override name = 'UpstreamAuthorizationFailed';
}

interface CachedToken {
  /** The server's `updatedAt` the token was obtained for: a changed server gets a new one. */
  version: number;
  token: string;
  /** When the token stops being used (shortly before the endpoint says it expires). */
  renewAt: number;
}

export interface OAuthTokenDependencies {
  servers: Pick<McpServerRepository, 'oauthSecretOf' | 'recordHealth'>;
  clock: Clock;
  /** Token endpoints may be on private addresses (MCP_ALLOW_PRIVATE_ADDRESSES), like the servers themselves. */
  allowPrivateAddresses: boolean;
  /** How long one token request may take. */
  timeoutMs: number;
}

/** A token whose lifetime the endpoint does not give is used this long (a 401 replaces it sooner). */
const UNKNOWN_LIFETIME_MS = 5 * 60 * 1000;
/** A token is renewed this long before it expires at most (a tenth of its lifetime when that is shorter). */
const RENEW_MARGIN_MS = 60 * 1000;
/** A token endpoint that failed is not asked again for the same server version within this long (its error is repeated). */
const FAILURE_HOLD_MS = 2000;
/** The longest error text of a token endpoint kept. */
const MAX_DESCRIPTION = 200;

/** RFC 6749 appendix B: the form encoding of a client id or secret before it is put in HTTP Basic credentials. */
function formEncode(text: string): string {
  return encodeURIComponent(text).replace(/%20/g, '+');
}

/**
 * Access tokens for upstream MCP servers that require OAuth 2.1 client credentials: obtained with the
 * `client_credentials` grant at the server's token endpoint (client_secret_basic or client_secret_post, and the
 * server's URL as the `resource` indicator as MCP's authorization asks), kept until shortly before they expire, and
 * obtained once for all the calls that need one at the same time. A token endpoint that fails marks the server's health.
 */
export class OAuthTokens {
  readonly #tokens = new Map<string, CachedToken>();
  readonly #pending = new Map<string, Promise<CachedToken>>();
  readonly #failures = new Map<string, { error: UpstreamAuthorizationFailed; until: number }>();

  constructor(private readonly dependencies: OAuthTokenDependencies) {}

  /** A valid access token for `server` (which has OAuth settings), obtained now if none is held. */
  async token(server: McpServer): Promise<string> {
    const held = this.#tokens.get(server.id);
    if (held !== undefined && held.version === server.updatedAt && held.renewAt > this.dependencies.clock.now()) return held.token;
    const flight = `${server.id}:${server.updatedAt}`;
    const failure = this.#failures.get(flight);
    if (failure !== undefined && failure.until > this.dependencies.clock.now()) throw failure.error;
    this.#failures.delete(flight);
    let pending = this.#pending.get(flight);
    if (pending === undefined) {
      pending = this.#obtain(server).catch((error: unknown) => {
        // Calls that fail at once do not each ask the token endpoint again.
        if (error instanceof UpstreamAuthorizationFailed) this.#failures.set(flight, { error, until: this.dependencies.clock.now() + FAILURE_HOLD_MS });
        throw error;
      }).finally(() => this.#pending.delete(flight));
      this.#pending.set(flight, pending);
    }
    return (await pending).token;
  }

  /** The server refused `token` (401): it is not used again (a token obtained since by another call is kept). */
  invalidate(server: McpServer, token: string): void {
    if (this.#tokens.get(server.id)?.token === token) this.#tokens.delete(server.id);
  }

  /** Drops the token of a server changed or deleted. */
  forget(serverId: string): void {
    this.#tokens.delete(serverId);
    for (const flight of this.#failures.keys()) if (flight.startsWith(`${serverId}:`)) this.#failures.delete(flight);
  }

  async #obtain(server: McpServer): Promise<CachedToken> {
    const { clock, servers } = this.dependencies;
    const settings = server.oauth;
    if (settings === null) throw new UpstreamAuthorizationFailed(`The MCP server '${server.name}' has no OAuth client credentials.`);
    const secret = await servers.oauthSecretOf(server.id);
    try {
      if (secret === null) throw new UpstreamAuthorizationFailed('no client secret is set');
      const started = clock.now();
      const { token, lifetimeMs } = await this.#request(server, secret);
      const margin = Math.min(RENEW_MARGIN_MS, lifetimeMs / 10);
      const cached = { version: server.updatedAt, token, renewAt: started + lifetimeMs - margin };
      this.#tokens.set(server.id, cached);
      return cached;
    } catch (error) {
      const reason = error instanceof Error ? error.message : 'failed';
      const masked = secret === null || secret.length < 4 ? reason : reason.split(secret).join('[redacted]');
      const failure = new UpstreamAuthorizationFailed(`The OAuth token endpoint of the MCP server '${server.name}' did not issue a token: ${masked}`);
      await servers.recordHealth(server.id, { status: 'unhealthy', error: failure.message.slice(0, 300), checkedAt: clock.now(), latencyMs: null, tools: [] }, server.updatedAt).catch(() => false);
      throw failure;
    }
  }

  async #request(server: McpServer, secret: string): Promise<{ token: string; lifetimeMs: number }> {
    const settings = server.oauth as NonNullable<McpServer['oauth']>;
    const url = new URL(settings.tokenUrl);
    const addresses = { allowHttpLoopback: false, allowPrivateAddresses: this.dependencies.allowPrivateAddresses };
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const refusedLiteral = isIP(host) !== 0 ? await hostRefusal(url.hostname, addresses) : null;
    if (refusedLiteral !== null) throw new UpstreamAuthorizationFailed(refusedLiteral);
    const agent = new Agent({ connect: { lookup: addressCheckedLookup(addresses, (reason) => new UpstreamAuthorizationFailed(reason)) as never } });
    const form = new URLSearchParams({ grant_type: 'client_credentials' });
    if (settings.scope !== null) form.set('scope', settings.scope);
    if (settings.audience !== null) form.set('audience', settings.audience);
    if (server.transport !== 'stdio' && server.url !== '') form.set('resource', server.url);
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
    if (settings.authMethod === 'client_secret_basic') {
      headers.authorization = `Basic ${Buffer.from(`${formEncode(settings.clientId)}:${formEncode(secret)}`).toString('base64')}`;
    } else {
      form.set('client_id', settings.clientId);
      form.set('client_secret', secret);
    }
    try {
      const response = await undiciFetch(url, {
        method: 'POST', headers, body: form.toString(), redirect: 'error', dispatcher: agent, signal: AbortSignal.timeout(this.dependencies.timeoutMs),
      });
      const text = (await response.text()).slice(0, 64 * 1024);
      let body: Record<string, unknown> = {};
      try {
        const parsed: unknown = JSON.parse(text);
        if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
      } catch {
        // Not JSON: reported by status alone.
      }
      if (!response.ok) {
        const code = typeof body.error === 'string' ? ` ${body.error.slice(0, 64)}` : '';
        const description = typeof body.error_description === 'string' ? `: ${body.error_description.slice(0, MAX_DESCRIPTION)}` : '';
        throw new UpstreamAuthorizationFailed(`HTTP ${response.status}${code}${description}`);
      }
      const token = body.access_token;
      if (typeof token !== 'string' || token === '' || /[\s\x00-\x1f]/.test(token)) throw new UpstreamAuthorizationFailed('the answer holds no access_token');
      if (typeof body.token_type === 'string' && body.token_type.toLowerCase() !== 'bearer') throw new UpstreamAuthorizationFailed(`token_type '${body.token_type.slice(0, 32)}' is not Bearer`);
      const expiresIn = typeof body.expires_in === 'number' ? body.expires_in : typeof body.expires_in === 'string' ? Number(body.expires_in) : Number.NaN;
      return { token, lifetimeMs: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : UNKNOWN_LIFETIME_MS };
    } catch (error) {
      if (error instanceof UpstreamAuthorizationFailed) throw error;
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause : null;
      if (cause instanceof UpstreamAuthorizationFailed) throw cause;
      throw new UpstreamAuthorizationFailed(error instanceof Error && error.name === 'TimeoutError' ? 'no answer in time' : `could not be reached (${(cause ?? (error as Error)).message ?? 'failed'})`);
    } finally {
      await agent.close().catch(() => {});
    }
  }
}
