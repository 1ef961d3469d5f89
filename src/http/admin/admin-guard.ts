import { GatewayError } from '../../errors/gateway-error.js';
import type { GatewayServices } from '../../services.js';
import { recordGuess, refuseGuessing } from '../authenticate.js';
import { readJsonObject } from '../read-body.js';
import type { RequestContext, RouteHandler } from '../request-context.js';

/**
 * Wraps an admin handler: `Authorization: Bearer <ADMIN_TOKEN>` (or an authorised operator call) or 401; an address
 * that sent too many wrong tokens gets 429 until its window ends, whatever it sends.
 */
export function adminOnly(services: GatewayServices, handler: RouteHandler): RouteHandler {
  return async (context) => {
    if (context.operatorAuthorised === true) {
      await handler(context);
      return;
    }
    const now = services.clock.now();
    await refuseGuessing(services, 'admin-token', context, now);
    const header = context.request.headers.authorization;
    const token = header === undefined ? null : (/^Bearer\s+(\S+)\s*$/i.exec(header)?.[1] ?? null);
    if (!services.adminToken.verify(token)) {
      const refusal = new GatewayError('invalid_admin_token', 'A valid admin token is required (Authorization: Bearer <ADMIN_TOKEN>).');
      throw token === null ? refusal : await recordGuess(services, 'admin-token', context, now, refusal);
    }
    await handler(context);
  };
}

/**
 * Admin bodies are small; 1 MiB is plenty. Text with a NUL character is refused: PostgreSQL cannot store it (and no
 * name, reason or announcement needs one).
 */
export async function readAdminBody(context: RequestContext): Promise<Record<string, unknown>> {
  const body = await readJsonObject(context, 1024 * 1024);
  if (containsNul(body)) throw new GatewayError('bad_request', 'Text fields must not contain NUL characters (\\u0000).');
  return body;
}

/** Whether a string anywhere in the value (keys included) holds U+0000. The depth is bounded by readJsonObject. */
function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return value.some(containsNul);
  return Object.entries(value).some(([key, child]) => key.includes('\u0000') || containsNul(child));
}

export function notFound(what: string, id: string): GatewayError {
  return new GatewayError('not_found', `No ${what} with id '${id}'.`);
}

/** Unique-constraint violations from either database become a 409. */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : '';
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || /UNIQUE constraint failed/.test(message);
}
