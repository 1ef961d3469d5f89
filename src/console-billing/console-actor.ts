import { GatewayError } from '../errors/gateway-error.js';
import type { RequestContext } from '../http/request-context.js';
import { roleAllows, rolesAllowed, type ConsolePermission } from '../console/roles.js';

import type { AccountRole } from '../storage/repositories/console-repository.js';
import type { GatewayServices } from '../services.js';

export type ConsoleRole = AccountRole;

/** Who is calling, as the console's session layer established it. */
export interface ConsoleActorIdentity {
  accountId: string;
  userId: string;
  role: ConsoleRole;
  /** The user's email: support confirmations and replies go there. */
  email: string;
}

export interface ConsoleActor extends ConsoleActorIdentity {
  /**
   * Settles when the account's mailbox is proven for this user; else 403 `email_unverified`: top-ups, billing details
   * and support requests, like every lasting change, wait for it (console/mailbox-proof.ts).
   */
  requireProvenMailbox(): Promise<void>;
}

/**
 * Supplied by the console's session middleware: resolves the caller of a request or throws its 401/403
 * GatewayError. These routes never read cookies or tokens themselves.
 */
export type Authenticate = (context: RequestContext) => Promise<ConsoleActor>;

/**
 * Refuses the actor unless its role holds `permission`, with the console's own check (src/console/roles.ts) and
 * its 403 `forbidden`, so the money routes and the rest of the console answer a role the same way.
 */
export function requirePermission(actor: ConsoleActor, permission: ConsolePermission): void {
  if (!roleAllows(actor.role, permission)) {
    throw new GatewayError('forbidden', `Your role (${actor.role}) on this account does not allow this; it needs one of: ${rolesAllowed(permission).join(', ')}.`);
  }
}


/** What the billing, referral and support routes are built from: the services and how to find the caller. */
export interface BillingRouteDeps {
  readonly services: GatewayServices;
  readonly authenticate: Authenticate;
}
