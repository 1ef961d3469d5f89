import { consoleRoutes } from '../console-route-table.js';
import { ssoClientsOf } from './sso-connections.js';
import type { SsoAvailabilityJson, SsoStartJson } from '../../contract/sso.js';
import { z } from 'zod';
import { GatewayError } from '../../errors/gateway-error.js';
import type { RequestContext } from '../../http/request-context.js';
import { enforceIpRateLimit } from '../../http/public-rate-limit.js';
import { sendJson } from '../../http/respond.js';
import { parseInput } from '../../management/parse-input.js';
import { describeError } from '../../shared/logger.js';
import { newPkcePair, type OidcClient } from '../../sso/oidc-client.js';
import { ProviderError } from '../../sso/provider-http.js';
import type { SsoConnection } from '../../storage/repositories/sso-repository.js';
import { consoleUsesTls, type ConsoleDeps } from '../console-deps.js';
import { readConsoleBody } from '../console-route.js';
import { readCookies, serializeCookie } from '../cookies.js';
import { hashToken, newSecretToken, sameSecret } from '../secret-token.js';
import { startSession } from '../session-store.js';
import { connectionById, emailDomain, isOperatorConnection, operatorConnection, type SsoClients } from './sso-connections.js';
import { resolveAccountMember, resolveOperator } from './sso-identity.js';

/** A sign-in must come back from the provider within this long. */
const LOGIN_TTL_MS = 10 * 60_000;
const CALLBACK_PATH = '/api/auth/sso/callback';

const startSchema = z.object({
  email: z.email().max(254).transform((value) => value.toLowerCase()).optional(),
  operator: z.literal(true).optional(),
  next: z.string().max(2000).optional(),
}).strict().refine((input) => (input.email === undefined) !== (input.operator === undefined), { message: 'Give either email or operator: true.' });

/** The redirect URI registered with every provider: the console's own callback, fixed by CONSOLE_URL (or the listener). */
export function ssoRedirectUri(deps: ConsoleDeps): string {
  return `${deps.urls.console()}${CALLBACK_PATH}`;
}

/** Only a path of the console is followed after sign-in: never `//host`, `/\host` or an absolute URL. */
export function safeReturnPath(next: string | undefined): string {
  if (next === undefined || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\') || /[\u0000-\u001f\\]/.test(next)) return '/keys';
  return next;
}

/** The cookie that binds a sign-in to the browser that started it; Lax, as the provider sends the browser back. */
function bindingCookieName(deps: ConsoleDeps): string {
  return consoleUsesTls(deps) ? '__Host-unigate_sso' : 'unigate_sso';
}

function clientOf(clients: SsoClients, connection: SsoConnection): OidcClient {
  return isOperatorConnection(connection) ? clients.operator : clients.account;
}

/**
 * Starts and callbacks per caller IP, as many a minute as a public endpoint's (PUBLIC_RATE_LIMIT_PER_MINUTE): each
 * writes a row and calls the provider, and a whole office behind one address signs in at nine.
 */
function limitPerIp(deps: ConsoleDeps, context: RequestContext, step: 'start' | 'callback'): Promise<void> {
  return enforceIpRateLimit(context, deps.services, {
    id: `ip:${context.clientIp}:console-sso-${step}`, dimension: `ip-console-sso-${step}`, limit: deps.services.config.publicRateLimitPerMinute, windowMs: 60_000,
  });
}

function redirect(context: RequestContext, location: string): void {
  context.response.statusCode = 303;
  context.response.setHeader('location', location);
  context.response.setHeader('cache-control', 'no-store');
  context.response.end();
}

/** Sign-in with OpenID Connect (authorization code with PKCE): start, and the provider's callback. */
export const SSO_SIGN_IN_ROUTES = consoleRoutes((deps: ConsoleDeps) => {
  const clients = ssoClientsOf(deps);
  const { storage, clock, logger } = deps.services;

  return { deps, clients, storage, clock, logger };
}, [
  { method: 'GET', path: '/api/auth/sso', who: 'anyone', handler: ({ deps }) => async ({ context }) => {
    const operator = await operatorConnection(deps.services);
    sendJson(context, 200, { operator: operator !== null && operator.enabled, redirect_uri: ssoRedirectUri(deps) } satisfies SsoAvailabilityJson);
  } },

  { method: 'POST', path: '/api/auth/sso/start', who: 'anyone', handler: ({ deps, clients, storage, clock }) => async ({ context }) => {
    await limitPerIp(deps, context, 'start');
    const input = parseInput(startSchema, await readConsoleBody(context));
    const connection = input.operator === true ? await operatorConnection(deps.services) : await storage.sso.getConnectionByDomain(emailDomain(input.email as string));
    if (connection === null || !connection.enabled) {
      throw new GatewayError('not_found', input.operator === true ? 'Single sign-on for operators is not set up on this gateway.' : 'No single sign-on is set up for this email domain; sign in with your password.', { param: input.operator === true ? 'operator' : 'email' });
    }
    const now = clock.now();
    const state = newSecretToken();
    const nonce = newSecretToken();
    const browser = newSecretToken();
    const pkce = newPkcePair();
    let authorizationUrl: string;
    try {
      authorizationUrl = await clientOf(clients, connection).authorizationUrl(connection, {
        redirectUri: ssoRedirectUri(deps), state, nonce, codeChallenge: pkce.challenge, ...(input.email === undefined ? {} : { loginHint: input.email }),
      });
    } catch (error) {
      if (error instanceof ProviderError) throw new GatewayError('sso_unavailable', `The identity provider could not be used: ${error.message}`);
      throw error;
    }
    await storage.sso.deleteExpiredLogins(now);
    await storage.sso.createLogin({
      stateHash: hashToken(state), connectionId: connection.id, browserHash: hashToken(browser), nonce, verifier: pkce.verifier,
      returnTo: safeReturnPath(input.next), createdAt: now, expiresAt: now + LOGIN_TTL_MS, usedAt: null,
    });
    context.response.appendHeader('set-cookie', serializeCookie(bindingCookieName(deps), browser, { maxAgeSeconds: LOGIN_TTL_MS / 1000, secure: consoleUsesTls(deps), sameSite: 'Lax' }));
    sendJson(context, 200, { authorization_url: authorizationUrl } satisfies SsoStartJson);
  } },

  { method: 'GET', path: CALLBACK_PATH, who: 'anyone', handler: ({ deps, clients, storage, clock, logger }) => async ({ context }) => {
    await limitPerIp(deps, context, 'callback');
    // Whatever happens, the binding cookie is spent.
    context.response.appendHeader('set-cookie', serializeCookie(bindingCookieName(deps), '', { maxAgeSeconds: 0, secure: consoleUsesTls(deps), sameSite: 'Lax' }));
    const fail = (reason: string, error?: unknown): void => {
      logger.info('single sign-on refused', { reason, ...(error === undefined ? {} : describeError(error)) });
      redirect(context, `/sign-in?sso_error=${encodeURIComponent(reason)}`);
    };
    const state = context.query.get('state');
    const code = context.query.get('code');
    const providerError = context.query.get('error');
    if (state === null || state.length > 200) return fail('The sign-in came back without its state; start it again.');
    const login = await storage.sso.consumeLogin(hashToken(state), clock.now());
    if (login === null) return fail('This sign-in is unknown, used already or expired; start it again.');
    const browser = readCookies(context.request).get(bindingCookieName(deps));
    if (browser === undefined || !sameSecret(hashToken(browser), login.browserHash)) return fail('This sign-in was started in another browser; start it again here.');
    if (providerError !== null) return fail(`The identity provider refused the sign-in (${providerError.slice(0, 100)}).`);
    if (code === null || code.length > 4096) return fail('The identity provider sent no code.');
    const connection = await connectionById(deps.services, login.connectionId);
    if (connection === null || !connection.enabled) return fail('This single sign-on was turned off meanwhile.');
    try {
      const identity = await clientOf(clients, connection).redeem(connection, { code, redirectUri: ssoRedirectUri(deps), verifier: login.verifier, nonce: login.nonce });
      const signIn = isOperatorConnection(connection) ? await resolveOperator(deps, connection, identity) : await resolveAccountMember(deps, connection, identity);
      await startSession(deps, context, signIn.user.id, signIn.accountId, connection.id);
      logger.info('single sign-on', { user: signIn.user.id, account: signIn.accountId, connection: connection.id });
      redirect(context, login.returnTo);
    } catch (error) {
      if (error instanceof ProviderError || error instanceof GatewayError) return fail(error.message, error);
      throw error;
    }
  } },
]);
