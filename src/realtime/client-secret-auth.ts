import type { KeyRefusal } from '../auth/key-verifier.js';
import { GatewayError } from '../errors/gateway-error.js';
import { enforceIpAllowlist, recordGuess, type Authenticated } from '../http/authenticate.js';
import type { RequestContext } from '../http/request-context.js';
import type { GatewayServices } from '../services.js';
import { readClientSecret, type ClientSecretGrant } from './client-secret.js';

/** Why the key behind a client secret may not be used, in the words of the secret's holder. */
function refusalOf(reason: KeyRefusal): GatewayError {
  switch (reason) {
    case 'expired': return new GatewayError('expired_api_key', 'The API key behind this client secret has expired.');
    case 'disabled': return new GatewayError('key_disabled', 'The API key behind this client secret is disabled.');
    case 'account_disabled': return new GatewayError('account_disabled', 'The account this client secret belongs to is disabled. Contact the operator of this gateway.');
    default: return new GatewayError('revoked_api_key', 'The API key behind this client secret has been revoked.');
  }
}

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
  // The secret names its key by id; from there on the key is checked by the verifier, as every key is.
  const minted = await services.storage.keys.getById(grant.keyId);
  const verification = minted === null ? null : await services.keys.verifyHash(minted.secretHash);
  if (verification === null || !verification.ok) throw refusalOf(verification === null ? 'unknown' : verification.reason);
  enforceIpAllowlist(context, verification.key);
  return { key: verification.key, account: verification.account, grant };
}
