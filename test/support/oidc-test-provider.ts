/**
 * A real OpenID provider (the `oidc-provider` package) on 127.0.0.1 for single sign-on tests. Its sign-in page is a
 * small form asking which of the provider's people signs in (no password: the provider's own sign-in is not under
 * test); consent is given for the first-party clients. Tests choose the people and their claims, the ID token's life,
 * and can rewrite the token endpoint's answer (to hand the gateway a token minted for another client or nonce).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash, randomBytes } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK } from 'jose';
import Provider, { type Configuration } from 'oidc-provider';

export interface TestPerson {
  email: string;
  email_verified: boolean;
  groups?: string[];
  roles?: string[];
  name?: string;
}

export interface TestClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface OidcTestProvider {
  /** The issuer, e.g. http://127.0.0.1:PORT (the provider's discovery document names exactly this). */
  issuer: string;
  people: Map<string, TestPerson>;
  /** Seconds an ID token lives (default 300). */
  idTokenTtlSeconds: number;
  /** Rewrites the token endpoint's JSON answer (null: unchanged). */
  tokenAnswerHook: ((body: Record<string, unknown>) => Promise<Record<string, unknown>> | Record<string, unknown>) | null;
  /** The `code_verifier`s the token endpoint received, in order. */
  verifiersSeen: string[];
  /** Adds a signing key and makes it the one used (the old one stays published): a key rotation. */
  rotateKeys(): Promise<void>;
  /** Starts the provider with its clients (call once, after the gateway's redirect URI is known). */
  start(clients: TestClient[]): Promise<void>;
  close(): Promise<void>;
}

export async function newSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: randomBytes(6).toString('hex'), alg: 'RS256', use: 'sig' };
}

function readForm(request: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
    request.on('error', reject);
  });
}

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** Listens at once (so the issuer URL is known before the gateway starts); `start` adds the provider behind it. */
export async function listenOidcTestProvider(options: { keys?: JWK[] } = {}): Promise<OidcTestProvider> {
  let provider: Provider | null = null;
  let handler: ((request: IncomingMessage, response: ServerResponse) => void) | null = null;
  const keys: JWK[] = [...(options.keys ?? [await newSigningKey()])];
  const server: Server = createServer((request, response) => {
    void route(request, response).catch((error: unknown) => {
      response.statusCode = 500;
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const fixture: OidcTestProvider = {
    issuer,
    people: new Map(),
    idTokenTtlSeconds: 300,
    tokenAnswerHook: null,
    verifiersSeen: [],
    async rotateKeys() {
      keys.unshift(await newSigningKey());
      if (provider !== null) await rebuild();
    },
    async start(clients) {
      registered = clients;
      await rebuild();
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  let registered: TestClient[] = [];

  async function rebuild(): Promise<void> {
    const configuration: Configuration = {
      clients: registered.map((client) => ({ ...client, grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' })),
      // Signing keys: the first signs; every one is published in the key set.
      jwks: { keys: keys as never },
      cookies: { keys: ['test-cookie-key-0123456789abcdef'] },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'groups', 'roles'] },
      // Claims asked for with scopes go into the ID token itself (no userinfo call needed).
      conformIdTokenClaims: false,
      pkce: { required: () => true },
      features: { devInteractions: { enabled: false } },
      interactions: { url: (_context, interaction) => `/interaction/${interaction.uid}` },
      ttl: { IdToken: () => fixture.idTokenTtlSeconds, AccessToken: 300, AuthorizationCode: 60, Interaction: 600, Session: 3600, Grant: 3600 },
      findAccount: (_context, id) => {
        const person = fixture.people.get(id);
        if (person === undefined) return undefined;
        return { accountId: id, claims: () => ({ sub: id, ...person }) };
      },
      // First-party clients: consent is given without a page.
      loadExistingGrant: async (context) => {
        const oidc = context.oidc;
        const session = oidc.session;
        const client = oidc.client;
        if (session?.accountId === undefined || client === undefined) return undefined;
        const known = session.grantIdFor(client.clientId);
        if (known !== undefined) return oidc.provider.Grant.find(known);
        const grant = new oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
        grant.addOIDCScope('openid email profile');
        grant.addOIDCClaims(['email', 'email_verified', 'name', 'groups', 'roles']);
        await grant.save();
        session.grantIdFor(client.clientId, grant.jti);
        return grant;
      },
    };
    const next = new Provider(issuer, configuration);
    next.use(async (context, nextMiddleware) => {
      await nextMiddleware();
      if (context.path === '/token' && context.method === 'POST') {
        const verifier = context.oidc?.params?.code_verifier;
        if (typeof verifier === 'string') fixture.verifiersSeen.push(verifier);
      }
      if (context.path === '/token' && context.status === 200 && fixture.tokenAnswerHook !== null) {
        context.body = await fixture.tokenAnswerHook({ ...(context.body as Record<string, unknown>) });
      }
    });
    provider = next;
    handler = next.callback();
  }

  async function route(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (provider === null || handler === null) {
      response.statusCode = 503;
      response.end('not started');
      return;
    }
    const url = new URL(request.url ?? '/', issuer);
    const interaction = /^\/interaction\/([^/]+)$/.exec(url.pathname);
    if (interaction !== null && request.method === 'GET') {
      const details = await provider.interactionDetails(request, response);
      if (details.prompt.name === 'login') {
        response.setHeader('content-type', 'text/html; charset=utf-8');
        response.end(`<!doctype html><html><head><title>Test provider sign-in</title></head><body>
<h1>Test identity provider</h1><form method="post" action="/interaction/${escapeHtml(details.uid)}">
<label for="login">Person</label> <input id="login" name="login" autocomplete="off">
<button type="submit">Sign in at the provider</button></form></body></html>`);
        return;
      }
      await provider.interactionFinished(request, response, { consent: {} }, { mergeWithLastSubmission: true });
      return;
    }
    if (interaction !== null && request.method === 'POST') {
      const form = await readForm(request);
      const login = form.get('login') ?? '';
      if (!fixture.people.has(login)) {
        response.statusCode = 400;
        response.end('unknown person');
        return;
      }
      await provider.interactionFinished(request, response, { login: { accountId: login } }, { mergeWithLastSubmission: false });
      return;
    }
    handler(request, response);
  }

  return fixture;
}

/** A minimal cookie jar over fetch with manual redirects (for driving a provider's pages without a browser). */
export class CookieJar {
  readonly cookies = new Map<string, string>();
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
  absorb(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const equals = (pair ?? '').indexOf('=');
      if (pair === undefined || equals < 0) continue;
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      if (value === '' || /max-age=0|expires=thu, 01 jan 1970/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size > 0) headers.set('cookie', this.header());
    const response = await fetch(url, { ...init, headers, redirect: 'manual', signal: AbortSignal.timeout(15_000) });
    this.absorb(response);
    return response;
  }
}

/**
 * Goes through the provider's pages as `login` would, from an authorization URL to the redirect back to the client;
 * returns that final URL (with `code` and `state`) without following it.
 */
export async function signInAtProvider(jar: CookieJar, authorizationUrl: string, login: string): Promise<URL> {
  let url = authorizationUrl;
  for (let hop = 0; hop < 10; hop += 1) {
    const response = await jar.fetch(url);
    if (response.status >= 300 && response.status < 400) {
      const next = new URL(response.headers.get('location') ?? '', url);
      if (!next.pathname.startsWith('/interaction/') && !next.pathname.startsWith('/auth')) return next;
      url = next.toString();
      continue;
    }
    const page = await response.text();
    const action = /<form method="post" action="([^"]+)"/.exec(page)?.[1];
    if (response.status !== 200 || action === undefined) throw new Error(`provider answered ${response.status}: ${page.slice(0, 300)}`);
    const posted = await jar.fetch(new URL(action.replace(/&#47;/g, '/'), url).toString(), {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ login }).toString(),
    });
    if (posted.status < 300 || posted.status >= 400) throw new Error(`provider's sign-in answered ${posted.status}: ${(await posted.text()).slice(0, 300)}`);
    url = new URL(posted.headers.get('location') ?? '', url).toString();
  }
  throw new Error('too many redirects at the provider');
}

/** A complete code flow for a client of the provider, with the nonce given: its ID token (for substitution attacks). */
export async function mintIdToken(provider: OidcTestProvider, client: TestClient, login: string, nonce: string): Promise<string> {
  const verifier = randomBytes(32).toString('base64url');
  const authorization = new URL(`${provider.issuer}/auth`);
  authorization.search = new URLSearchParams({
    response_type: 'code', client_id: client.client_id, redirect_uri: client.redirect_uris[0] as string, scope: 'openid email profile',
    state: randomBytes(8).toString('hex'), nonce, code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
  }).toString();
  const back = await signInAtProvider(new CookieJar(), authorization.toString(), login);
  const code = back.searchParams.get('code');
  if (code === null) throw new Error(`no code in ${back.toString()}`);
  const answer = await fetch(`${provider.issuer}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64')}` },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: client.redirect_uris[0] as string, code_verifier: verifier }).toString(),
  });
  const body = await answer.json() as { id_token?: string };
  if (typeof body.id_token !== 'string') throw new Error(`no id_token: ${JSON.stringify(body)}`);
  return body.id_token;
}
