import { hasMalformedAuthorization } from '../auth/extract-api-key.js';
import type { CredentialSurface } from '../auth/failed-attempt-guard.js';
import { IpRangeSet } from '../auth/ip-ranges.js';
import type { KeyRefusal } from '../auth/key-verifier.js';
import type { ClientFamily } from '../codecs/client-family.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { GatewayServices } from '../services.js';
import type { Account, ApiKey } from '../storage/records.js';
import { enforceBrowserPolicy } from './cors.js';
import type { RequestContext } from './request-context.js';

export interface Authenticated {
  key: ApiKey;
  account: Account;
}

/** 429 with Retry-After while the caller's address is over its failed-credential limit. */
export function refuseGuessing(services: GatewayServices, surface: CredentialSurface, context: RequestContext, now: number): void {
  const seconds = services.authFailures.refusedFor(surface, context.clientIp, now);
  if (seconds === null) return;
  const what = surface === 'api-key' ? 'API keys' : 'admin tokens';
  throw new GatewayError('too_many_failed_attempts', `Too many invalid ${what} from this IP address. Retry after ${seconds} s.`, { retryAfterSeconds: seconds });
}

/** Counts a wrong credential from the caller's address; the one that reaches the limit is logged. */
export function recordGuess(services: GatewayServices, surface: CredentialSurface, context: RequestContext, now: number): void {
  if (services.authFailures.recordFailure(surface, context.clientIp, now)) {
    services.logger.warn('failed-credential limit reached: refusing this address until its window ends', {
      surface, clientIp: context.clientIp, limit: services.config.authFailures.limit, windowSeconds: services.config.authFailures.windowSeconds,
    });
  }
}

const compiledAllowlists = new WeakMap<ApiKey, IpRangeSet>();

const REFUSALS: Record<KeyRefusal, (family: ClientFamily) => GatewayError> = {
  missing: (family) => new GatewayError('missing_api_key', `No API key was provided. ${family.keyHint}`),
  malformed: (family) => new GatewayError('invalid_api_key', `The API key is malformed. ${family.keyHint}`),
  unknown: () => new GatewayError('invalid_api_key', 'The API key is not valid.'),
  revoked: () => new GatewayError('revoked_api_key', 'The API key has been revoked.'),
  expired: () => new GatewayError('expired_api_key', 'The API key has expired.'),
  disabled: () => new GatewayError('key_disabled', 'The API key is disabled.'),
  account_disabled: () => new GatewayError('account_disabled', 'The account this API key belongs to is disabled. Contact the operator of this gateway.'),
};

/**
 * Finds and verifies the key, then the caller's IP against the key's allowlist. An address that sent
 * too many malformed or unknown keys is refused with 429 before its key is looked at (FailedAttemptGuard).
 */
export async function authenticate(context: RequestContext, services: GatewayServices): Promise<Authenticated> {
  const { family } = context;
  const now = services.clock.now();
  refuseGuessing(services, 'api-key', context, now);
  const plaintext = family.readApiKey(context.request.headers, context.query);
  const verification = plaintext === null && hasMalformedAuthorization(context.request.headers)
    ? ({ ok: false, reason: 'malformed' } as const)
    : await services.keys.verify(plaintext);
  if (!verification.ok) {
    if (verification.reason === 'malformed' || verification.reason === 'unknown') recordGuess(services, 'api-key', context, now);
    throw REFUSALS[verification.reason](family);
  }
  const { key, account } = verification;
  enforceBrowserPolicy(context, key);
  if (key.ipAllowlist !== null) {
    let allowlist = compiledAllowlists.get(key);
    if (allowlist === undefined) compiledAllowlists.set(key, (allowlist = new IpRangeSet(key.ipAllowlist)));
    if (!allowlist.has(context.clientIp)) throw new GatewayError('ip_not_allowed', 'Requests from this IP address are not allowed for this API key.');
  }
  return { key, account };
}
