import { GatewayError } from '../errors/gateway-error.js';
import { readBody } from '../http/read-body.js';
import type { RequestContext, RouteHandler } from '../http/request-context.js';
import { consoleUsesTls, type ConsoleDeps } from './console-deps.js';
import { checkCsrf } from './csrf.js';
import { makesLastingChanges, requireProvenMailbox } from './mailbox-proof.js';
import type { Authenticate } from '../console-billing/console-actor.js';
import { roleAllows, type ConsolePermission } from './roles.js';
import { setApiSecurityHeaders } from './security-headers.js';
import { projectScopeAllows } from './project-scope.js';
import { resolveSession, type ActiveSession } from './session-store.js';

/** Console bodies are small forms. */
const MAX_CONSOLE_BODY_BYTES = 64 * 1024;

export interface AnyConsoleRequest {
  context: RequestContext;
  /** The signed-in session, if any. */
  active: ActiveSession | null;
}

export interface SignedInRequest {
  context: RequestContext;
  active: ActiveSession;
}

function isSafeMethod(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

async function prepare(deps: ConsoleDeps, context: RequestContext): Promise<ActiveSession | null> {
  setApiSecurityHeaders(context.response, consoleUsesTls(deps));
  const active = await resolveSession(deps, context);
  if (!isSafeMethod(context.method)) checkCsrf(deps, context, active);
  return active;
}

/** A route open to visitors without a session (state changes still need the CSRF token). */
export function anyoneRoute(deps: ConsoleDeps, handler: (request: AnyConsoleRequest) => Promise<void>): RouteHandler {
  return async (context) => {
    const active = await prepare(deps, context);
    await handler({ context, active });
  };
}

/**
 * A route for a signed-in user whose role on the session's account allows `permission` (null: any member). A change
 * under a permission that makes lasting things needs the account's mailbox proven (mailbox-proof.ts).
 */
export function signedInRoute(deps: ConsoleDeps, permission: ConsolePermission | null, handler: (request: SignedInRequest) => Promise<void>): RouteHandler {
  return async (context) => {
    const active = await prepare(deps, context);
    if (active === null) throw new GatewayError('unauthenticated', 'Sign in to the console first (no session, or it has ended).');
    if (permission !== null && !roleAllows(active.role, permission)) {
      throw new GatewayError('forbidden', `Your role (${active.role}) on this account does not allow this.`);
    }
    if (permission !== null && active.projects !== null && !projectScopeAllows(active.projects, permission)) {
      throw new GatewayError('forbidden', 'Your project roles on this account do not allow this.');
    }
    if (!isSafeMethod(context.method) && makesLastingChanges(permission)) await requireProvenMailbox(deps, active.user, active.session.accountId);
    await handler({ context, active });
  };
}

/** The JSON object body of a console request; an empty body reads as `{}`. */
export async function readConsoleBody(context: RequestContext): Promise<Record<string, unknown>> {
  const body = await readBody(context, MAX_CONSOLE_BODY_BYTES);
  if (body.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw new GatewayError('invalid_json', 'Request body is not valid JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new GatewayError('invalid_json', 'Request body must be a JSON object.');
  return value as Record<string, unknown>;
}

export function sendNoContent(context: RequestContext, status = 204): void {
  context.response.statusCode = status;
  context.response.end();
}

/** The signed-in caller as the billing, referral and support routes take it: 401 without a live session. */
export function consoleActorOf(deps: ConsoleDeps): Authenticate {
  return async (context) => {
    const active = await prepare(deps, context);
    if (active === null) throw new GatewayError('unauthenticated', 'Sign in to the console first (no session, or it has ended).');
    // Billing, referrals and support are the account's: a member scoped to projects reaches none of them.
    if (active.projects !== null) throw new GatewayError('forbidden', 'Your project roles on this account do not allow this.');
    return {
      accountId: active.session.accountId, userId: active.user.id, role: active.role, email: active.user.email,
      requireProvenMailbox: () => requireProvenMailbox(deps, active.user, active.session.accountId),
    };
  };
}
