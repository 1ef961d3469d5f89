import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';
import { consoleUsesTls, type ConsoleDeps } from './console-deps.js';
import { readCookies, serializeCookie } from './cookies.js';
import type { ActiveSession } from './session-store.js';
import { preSessionCookieName } from './session-store.js';
import { hashToken, newSecretToken, sameSecret } from './secret-token.js';

/** The CSRF token of a visitor without a session: derived from the pre-session cookie, which scripts cannot read. */
function preSessionToken(cookieValue: string): string {
  return hashToken(`csrf:${cookieValue}`);
}

/**
 * The CSRF token to hand to the page: the session's, or for a visitor without one the token bound to the
 * pre-session cookie (set here when the browser has none yet).
 */
export function csrfTokenFor(deps: ConsoleDeps, context: RequestContext, active: ActiveSession | null): string {
  if (active !== null) return active.session.csrfToken;
  const name = preSessionCookieName(deps);
  let value = readCookies(context.request).get(name);
  if (value === undefined || value.length < 32 || value.length > 100) {
    value = newSecretToken();
    context.response.appendHeader('set-cookie', serializeCookie(name, value, { secure: consoleUsesTls(deps) }));
  }
  return preSessionToken(value);
}

/**
 * Every state change must come from the console's own pages: an Origin (when the browser sends one) equal to the
 * console's, no cross-site Sec-Fetch-Site, and the X-CSRF-Token the page was given for this session (or, without
 * a session, for this browser's pre-session cookie).
 */
export function checkCsrf(deps: ConsoleDeps, context: RequestContext, active: ActiveSession | null): void {
  const headers = context.request.headers;
  const origin = headers.origin;
  if (origin !== undefined && !isConsoleOrigin(deps, origin, headers.host)) throw refused('The request did not come from the console (Origin differs).');
  const site = headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') throw refused('The request did not come from the console (cross-site).');
  const sent = headers['x-csrf-token'];
  if (typeof sent !== 'string' || sent === '') throw refused('The X-CSRF-Token header is missing; read the token from GET /api/session.');
  if (active !== null) {
    if (!sameSecret(sent, active.session.csrfToken)) throw refused('The X-CSRF-Token header does not match this session.');
    return;
  }
  const cookie = readCookies(context.request).get(preSessionCookieName(deps));
  if (cookie === undefined || !sameSecret(sent, preSessionToken(cookie))) throw refused('The X-CSRF-Token header does not match this browser; read the token from GET /api/session.');
}

/**
 * With CONSOLE_URL, exactly that origin. Without it, the origin of the address the browser used (its Host header),
 * so a console reached through any name of the machine works; a cross-site page's Origin never equals it.
 */
function isConsoleOrigin(deps: ConsoleDeps, origin: string, host: string | undefined): boolean {
  if (deps.services.config.consoleUrl !== null) return origin === deps.services.config.consoleUrl;
  return origin === deps.urls.console() || (host !== undefined && (origin === `http://${host}` || origin === `https://${host}`));
}

function refused(message: string): GatewayError {
  return new GatewayError('csrf_failed', message);
}
