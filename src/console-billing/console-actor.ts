import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';

export type ConsoleRole = 'owner' | 'admin' | 'developer' | 'billing' | 'viewer';

/** Who is calling, as the console's session layer established it. */
export interface ConsoleActor {
  accountId: string;
  userId: string;
  role: ConsoleRole;
  /** The user's email: support confirmations and replies go there. */
  email: string;
}

/**
 * Supplied by the console's session middleware: resolves the caller of a request or throws its 401/403
 * GatewayError. These routes never read cookies or tokens themselves.
 */
export type Authenticate = (context: RequestContext) => Promise<ConsoleActor>;

/** Roles that may spend the account's money and change its billing details. */
export const BILLING_WRITERS: readonly ConsoleRole[] = ['owner', 'admin', 'billing'];
/** Roles that may see balances, invoices and referral earnings. */
export const BILLING_READERS: readonly ConsoleRole[] = ['owner', 'admin', 'billing', 'viewer'];

export function requireRole(actor: ConsoleActor, roles: readonly ConsoleRole[]): void {
  if (!roles.includes(actor.role)) {
    throw new GatewayError('role_not_allowed', `Your role (${actor.role}) may not do this; it needs one of: ${roles.join(', ')}.`);
  }
}
