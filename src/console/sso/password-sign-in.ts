import { GatewayError } from '../../errors/gateway-error.js';
import type { ConsoleUser } from '../../storage/repositories/console-repository.js';
import type { ConsoleDeps } from '../console-deps.js';
import { emailDomain, OPERATOR_ENV_CONNECTION_ID } from './sso-connections.js';

/**
 * Refuses a password sign-in of a member of an account that requires single sign-on for the member's email domain.
 * Only that account's members are held to it: a domain claimed by one account never locks out anyone else. Owners
 * keep their password (and second factor) as the way back in when the provider fails or is misconfigured.
 */
export async function assertPasswordSignInAllowed(deps: ConsoleDeps, user: ConsoleUser): Promise<void> {
  const connection = await deps.services.storage.sso.getConnectionByDomain(emailDomain(user.email));
  if (connection === null || !connection.enabled || !connection.requireSso) return;
  const membership = await deps.services.storage.console.getMembership(connection.owner, user.id);
  if (membership === null || membership.role === 'owner') return;
  throw new GatewayError('sso_required', 'Your account requires single sign-on for your email domain: use "Sign in with SSO".');
}

/** Whether the session was signed in through the operators' provider (which stands in for the console's second factor). */
export async function signedInAsOperatorBySso(deps: ConsoleDeps, ssoConnectionId: string | null | undefined): Promise<boolean> {
  if (ssoConnectionId == null) return false;
  if (ssoConnectionId === OPERATOR_ENV_CONNECTION_ID) return deps.services.config.sso.operator !== null;
  const connection = await deps.services.storage.sso.getConnection(ssoConnectionId);
  return connection !== null && connection.owner === 'operator' && connection.enabled;
}
