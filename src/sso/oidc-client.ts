import { createHash, randomBytes } from 'node:crypto';
import type { errors, JSONWebKeySet, JWTPayload } from 'jose';
import { loadOnce } from '../shared/load-once.js';
import type { Clock } from '../shared/clock.js';
import { ProviderError, type ProviderHttp } from './provider-http.js';

/** The JOSE library verifies ID tokens only at a sign-in through single sign-on: loaded then, not at start. */
const jose = loadOnce(() => import('jose'));
type JoseErrors = typeof errors;

/** An OpenID Connect client's settings: the provider's issuer and the client registered with it. */
export interface OidcClientSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
}

/** What the provider's discovery document says, checked. */
export interface ProviderMetadata {
  issuer: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  jwksUri: string;
  /** How the token endpoint takes the client's secret. */
  tokenAuth: 'client_secret_basic' | 'client_secret_post';
}

/** The ID token's claims once every check passed. */
export interface VerifiedIdentity {
  subject: string;
  email: string | null;
  emailVerified: boolean;
  claims: JWTPayload;
}

/** Allowed clock difference between the gateway and the provider when checking exp, iat and nbf. */
export const CLOCK_SKEW_SECONDS = 60;
/** An ID token issued longer ago than this is refused even if it has not expired. */
const MAX_ID_TOKEN_AGE_SECONDS = 600;
const DISCOVERY_TTL_MS = 60 * 60_000;
const JWKS_TTL_MS = 60 * 60_000;
/** A key set is fetched again for an unknown key id at most this often (rotation, without hammering the provider). */
const JWKS_REFETCH_COOLDOWN_MS = 30_000;
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

export function newPkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new ProviderError(`The discovery document has no ${what}.`);
  return value;
}

/** The discovery document's URL of an issuer (OpenID Connect Discovery 1.0, section 4). */
export function discoveryUrl(issuer: string): string {
  return `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
}

/**
 * Talks OpenID Connect (authorization code with PKCE) to any standard provider: discovery, the authorization URL,
 * the code exchange and the ID token's checks (signature by a key of the provider's key set, refetched when a new key
 * id appears; iss, aud, azp, exp, iat and nonce). Discovery documents and key sets are cached per URL.
 */
export class OidcClient {
  readonly #discovery = new Map<string, { metadata: ProviderMetadata; fetchedAt: number }>();
  readonly #keySets = new Map<string, { keys: JSONWebKeySet; fetchedAt: number; refreshedAt: number | null }>();

  constructor(private readonly http: ProviderHttp, private readonly clock: Clock) {}

  async metadata(issuer: string): Promise<ProviderMetadata> {
    const cached = this.#discovery.get(issuer);
    const now = this.clock.now();
    if (cached !== undefined && now - cached.fetchedAt < DISCOVERY_TTL_MS) return cached.metadata;
    const answer = await this.http.call(discoveryUrl(issuer), { method: 'GET' });
    if (answer.status !== 200 || answer.json === null || typeof answer.json !== 'object') {
      throw new ProviderError(`${discoveryUrl(issuer)} answered ${answer.status}, not a discovery document.`);
    }
    const document = answer.json as Record<string, unknown>;
    // The issuer in the document must be the configured one, character for character (Discovery 1.0, 4.3).
    if (document.issuer !== issuer) throw new ProviderError(`The discovery document names the issuer ${JSON.stringify(document.issuer)}, not ${JSON.stringify(issuer)}.`);
    const methods = document.code_challenge_methods_supported;
    if (Array.isArray(methods) && !methods.includes('S256')) throw new ProviderError('The provider does not support PKCE with S256.');
    const authMethods = document.token_endpoint_auth_methods_supported;
    const tokenAuth = !Array.isArray(authMethods) || authMethods.includes('client_secret_basic') ? 'client_secret_basic'
      : authMethods.includes('client_secret_post') ? 'client_secret_post' : null;
    if (tokenAuth === null) throw new ProviderError('The provider takes neither client_secret_basic nor client_secret_post at its token endpoint.');
    const metadata: ProviderMetadata = {
      issuer,
      authorizationEndpoint: text(document.authorization_endpoint, 'authorization_endpoint'),
      tokenEndpoint: text(document.token_endpoint, 'token_endpoint'),
      jwksUri: text(document.jwks_uri, 'jwks_uri'),
      tokenAuth,
    };
    for (const url of [metadata.authorizationEndpoint, metadata.tokenEndpoint, metadata.jwksUri]) {
      const refusal = this.http.refusal(url);
      if (refusal !== null) throw new ProviderError(`The discovery document's ${url}: ${refusal}`);
    }
    this.#discovery.set(issuer, { metadata, fetchedAt: now });
    return metadata;
  }

  /** Where to send the browser: the code flow with PKCE (S256), state and nonce. */
  async authorizationUrl(settings: OidcClientSettings, input: { redirectUri: string; state: string; nonce: string; codeChallenge: string; loginHint?: string }): Promise<string> {
    const metadata = await this.metadata(settings.issuer);
    const url = new URL(metadata.authorizationEndpoint);
    url.searchParams.set('response_type', 'code');
    url.searchParams.set('client_id', settings.clientId);
    url.searchParams.set('redirect_uri', input.redirectUri);
    url.searchParams.set('scope', 'openid email profile');
    url.searchParams.set('state', input.state);
    url.searchParams.set('nonce', input.nonce);
    url.searchParams.set('code_challenge', input.codeChallenge);
    url.searchParams.set('code_challenge_method', 'S256');
    if (input.loginHint !== undefined) url.searchParams.set('login_hint', input.loginHint);
    return url.toString();
  }

  /** Exchanges the code (with the PKCE verifier) and returns the checked identity of its ID token. */
  async redeem(settings: OidcClientSettings, input: { code: string; redirectUri: string; verifier: string; nonce: string }): Promise<VerifiedIdentity> {
    const metadata = await this.metadata(settings.issuer);
    const form = new URLSearchParams({ grant_type: 'authorization_code', code: input.code, redirect_uri: input.redirectUri, code_verifier: input.verifier });
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (metadata.tokenAuth === 'client_secret_basic') {
      // RFC 6749 2.3.1: the id and secret are form-encoded before they are joined and base64-encoded.
      const encode = (value: string): string => encodeURIComponent(value).replace(/%20/g, '+');
      headers.authorization = `Basic ${Buffer.from(`${encode(settings.clientId)}:${encode(settings.clientSecret)}`).toString('base64')}`;
    } else {
      form.set('client_id', settings.clientId);
      form.set('client_secret', settings.clientSecret);
    }
    const answer = await this.http.call(metadata.tokenEndpoint, { method: 'POST', headers, body: form.toString() });
    const body = (answer.json ?? {}) as Record<string, unknown>;
    if (answer.status !== 200) {
      const reason = typeof body.error === 'string' ? body.error : `status ${answer.status}`;
      throw new ProviderError(`The provider refused the code exchange (${reason}).`);
    }
    if (typeof body.id_token !== 'string') throw new ProviderError('The token answer has no id_token.');
    return this.verifyIdToken(settings, metadata, body.id_token, input.nonce);
  }

  async verifyIdToken(settings: OidcClientSettings, metadata: ProviderMetadata, idToken: string, nonce: string): Promise<VerifiedIdentity> {
    const { createLocalJWKSet, errors: joseErrors, jwtVerify } = await jose.get();
    const verify = async (keys: JSONWebKeySet): Promise<JWTPayload> => (await jwtVerify(idToken, createLocalJWKSet(keys), {
      issuer: metadata.issuer,
      audience: settings.clientId,
      algorithms: ALGORITHMS,
      clockTolerance: CLOCK_SKEW_SECONDS,
      maxTokenAge: MAX_ID_TOKEN_AGE_SECONDS,
      currentDate: new Date(this.clock.now()),
      requiredClaims: ['sub', 'iat', 'exp'],
    })).payload;
    let claims: JWTPayload;
    try {
      try {
        claims = await verify(await this.keySet(metadata.jwksUri, false));
      } catch (error) {
        // A key id the cached set lacks: the provider may have rotated its keys.
        if (!(error instanceof joseErrors.JWKSNoMatchingKey)) throw error;
        claims = await verify(await this.keySet(metadata.jwksUri, true));
      }
    } catch (error) {
      if (error instanceof ProviderError) throw error;
      throw new ProviderError(`The ID token was refused: ${describeJoseError(joseErrors, error)}`);
    }
    // With several audiences, the token must have been issued to this client (OIDC Core 3.1.3.7, items 4 and 5).
    if (Array.isArray(claims.aud) && claims.aud.length > 1 && claims.azp !== settings.clientId) throw new ProviderError('The ID token was refused: it was issued to another client (azp).');
    if (claims.azp !== undefined && claims.azp !== settings.clientId) throw new ProviderError('The ID token was refused: it was issued to another client (azp).');
    if (claims.nonce !== nonce) throw new ProviderError('The ID token was refused: its nonce is not the one of this sign-in.');
    const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : null;
    // Some providers send email_verified as the string "true"; Microsoft Entra ID sends none, and vouches for the
    // address with its optional claim xms_edov (the email's domain is verified by the tenant).
    const vouches = (value: unknown): boolean => value === true || value === 'true' || value === '1' || value === 1;
    const emailVerified = vouches(claims.email_verified) || vouches(claims.xms_edov);
    return { subject: claims.sub as string, email, emailVerified, claims };
  }

  async keySet(jwksUri: string, refresh: boolean): Promise<JSONWebKeySet> {
    const now = this.clock.now();
    const cached = this.#keySets.get(jwksUri);
    const fresh = cached !== undefined && now - cached.fetchedAt < JWKS_TTL_MS;
    const refreshAllowed = cached?.refreshedAt == null || now - cached.refreshedAt >= JWKS_REFETCH_COOLDOWN_MS;
    if (cached !== undefined && fresh && (!refresh || !refreshAllowed)) return cached.keys;
    const answer = await this.http.call(jwksUri, { method: 'GET' });
    const keys = answer.json as JSONWebKeySet | null;
    if (answer.status !== 200 || keys === null || !Array.isArray(keys.keys)) throw new ProviderError(`${jwksUri} answered ${answer.status}, not a key set.`);
    this.#keySets.set(jwksUri, { keys, fetchedAt: now, refreshedAt: refresh ? now : (cached?.refreshedAt ?? null) });
    return keys;
  }
}

function describeJoseError(joseErrors: JoseErrors, error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'it has expired';
  if (error instanceof joseErrors.JWTClaimValidationFailed) return `its ${error.claim} claim is wrong (${error.reason})`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'its signature does not verify';
  if (error instanceof joseErrors.JWKSNoMatchingKey) return 'no key of the provider signed it';
  if (error instanceof joseErrors.JOSEError) return error.code;
  return error instanceof Error ? error.message : String(error);
}
