import { GatewayError } from '../errors/gateway-error.js';
import { enforceIpAllowlist, recordGuess, type Authenticated } from '../http/authenticate.js';
import type { RequestContext } from '../http/request-context.js';
import type { GatewayServices } from '../services.js';
import { readClientSecret, type ClientSecretGrant } from './client-secret.js';

/**
 * A realtime session opened with a client secret: the secret's signature and expiry, then the key that minted it as
 * the key verifier checks every key (revoked, expired, disabled, its account) and its IP allowlist. A browser's origin
 * is not checked: client secrets exist to be used from browsers. A forged secret counts as a wrong key for lockouts.
 */
export async function authenticateClientSecret(context: RequestContext, services: GatewayServices, hmacKey: Buffer, secret: string): Promise<Authenticated & { grant: ClientSecretGrant }> {
  const now = services.clock.now();
  const grant = readClientSecret(hmacKey, secret, now);
  if (grant === 'invalid') throw await recordGuess(services, 'api-key', context, now, new GatewayError('invalid_api_key', 'The client secret is not valid.'));
  if (grant === 'expired') throw new GatewayError('expired_api_key', 'The client secret has expired; create another with POST /v1/realtime/client_secrets.');
  const stored = await services.storage.keys.getById(grant.keyId);
  const account = stored === null ? null : await services.storage.accounts.getById(stored.accountId);
  if (stored === null || account === null || stored.status === 'revoked' || account.status === 'deleted') throw new GatewayError('revoked_api_key', 'The API key behind this client secret has been revoked.');
  if (stored.expiresAt !== null && stored.expiresAt <= now) throw new GatewayError('expired_api_key', 'The API key behind this client secret has expired.');
  if (stored.status === 'disabled') throw new GatewayError('key_disabled', 'The API key behind this client secret is disabled.');
  if (account.status === 'disabled') throw new GatewayError('account_disabled', 'The account this client secret belongs to is disabled. Contact the operator of this gateway.');
  enforceIpAllowlist(context, stored);
  const projectId = stored.projectId ?? null;
  const key = { ...stored, project: projectId === null ? null : await services.storage.projects.getById(projectId) };
  return { key, account, grant };
}
