import { hasMalformedAuthorization } from '../auth/extract-api-key.js';
import type { CredentialSurface } from '../auth/failed-attempt-guard.js';
import { IpRangeSet } from '../auth/ip-ranges.js';
import type { KeyRefusal, KeyVerification } from '../auth/key-verifier.js';
import type { ClientFamily } from '../codecs/client-family.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { GatewayServices } from '../services.js';
import type { Account, ApiKey } from '../domain/records.js';
import { enforceBrowserPolicy } from './cors.js';
import type { RequestContext } from './request-context.js';

export interface Authenticated {
  key: ApiKey;
  account: Account;
}

function lockedOut(services: GatewayServices, surface: CredentialSurface, seconds: number): GatewayError {
  services.lockouts.refused(surface);
  const what = surface === 'api-key' ? 'API keys' : 'admin tokens';
  return new GatewayError('too_many_failed_attempts', `Too many invalid ${what} from this IP address. Retry after ${seconds} s.`, { retryAfterSeconds: seconds });
}

/** 429 with Retry-After while the caller's address is locked out (on any instance, when they share Redis). */
export async function refuseGuessing(services: GatewayServices, surface: CredentialSurface, context: RequestContext, now: number): Promise<void> {
  const seconds = await services.authFailures.check(surface, context.clientIp, now);
  if (seconds !== null) throw lockedOut(services, surface, seconds);
}

/**
 * Counts a wrong credential from the caller's address and returns the refusal to answer with: `refusal` itself, or
 * 429 when the address is locked out already (here, or by another instance's count). The failure that reaches the
 * limit starts the lockout and is reported once.
 */
export async function recordGuess(services: GatewayServices, surface: CredentialSurface, context: RequestContext, now: number, refusal: GatewayError): Promise<GatewayError> {
  const known = services.authFailures.refusedFor(surface, context.clientIp, now);
  if (known !== null) return lockedOut(services, surface, known);
  const outcome = await services.authFailures.recordFailure(surface, context.clientIp, now);
  if (outcome.started) services.lockouts.started(surface, context.clientIp);
  return outcome.lockedForSeconds === null ? refusal : lockedOut(services, surface, outcome.lockedForSeconds);
}

/** Before a key this instance holds nothing for is looked up: refused with 429 if the address is locked out and the key is no issued key's. */
async function refuseUnissuedWhileLockedOut(services: GatewayServices, context: RequestContext, now: number, secretHash: string): Promise<void> {
  const seconds = await services.authFailures.check('api-key', context.clientIp, now);
  if (seconds !== null && !(await services.keys.issued.mayBeIssued(secretHash))) throw lockedOut(services, 'api-key', seconds);
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
 * Finds and verifies the key, then the caller's IP against the key's allowlist.
 *
 * An address that sent too many malformed or unknown keys is locked out for the rest of its window, and the lockout
 * refuses only what a guesser sends, without a database lookup: malformed keys, keys already known to be unknown,
 * and keys this instance has not verified that are no issued key's (IssuedKeySet). A key this instance has verified
 * is served from its cache as usual, and an issued key not verified here yet is looked up, so the good keys behind a
 * shared address (a NAT, a CI farm) keep working while one client there sends stale ones.
 *
 * A key the verifier's cache answers for is accepted (or refused) in the same turn, without a promise; a key it must
 * look up, and a refusal that counts a guess, return a promise. Either may throw at once; `await` takes both.
 */
export function authenticate(context: RequestContext, services: GatewayServices): Authenticated | Promise<Authenticated> {
  if (context.inProcess !== undefined) return { key: context.inProcess.key, account: context.inProcess.account };
  if (context.authenticated !== undefined) return context.authenticated;
  const now = services.clock.now();
  const plaintext = context.family.readApiKey(context.request.headers, context.query);
  // A key the cache knows (or a missing or malformed one) is answered in this turn; only a lookup waits on storage.
  const verification = plaintext === null && hasMalformedAuthorization(context.request.headers) ? MALFORMED : services.keys.verifyNow(plaintext);
  return typeof verification === 'string' ? lookedUp(context, services, now, verification) : accepted(context, services, now, verification);
}

const MALFORMED: KeyVerification = { ok: false, reason: 'malformed' };

/** A key the cache cannot answer for, looked up by its secret's hash (after the lockout's check, for a key not verified here). */
async function lookedUp(context: RequestContext, services: GatewayServices, now: number, secretHash: string): Promise<Authenticated> {
  const verification = await services.keys.verifyHash(secretHash, (hash) => refuseUnissuedWhileLockedOut(services, context, now, hash));
  return accepted(context, services, now, verification);
}

/**
 * The caller of a verified key, or the refusal: a malformed or unknown key counts as a guess from the caller's
 * address (a promise then, as the count may be shared); the browser policy and the key's IP allowlist apply.
 */
function accepted(context: RequestContext, services: GatewayServices, now: number, verification: KeyVerification): Authenticated | Promise<never> {
  if (!verification.ok) {
    const refusal = REFUSALS[verification.reason](context.family);
    if (verification.reason === 'malformed' || verification.reason === 'unknown') return refusedGuess(services, context, now, refusal);
    throw refusal;
  }
  const { key, account } = verification;
  enforceBrowserPolicy(context, key);
  enforceIpAllowlist(context, key);
  return { key, account };
}

async function refusedGuess(services: GatewayServices, context: RequestContext, now: number, refusal: GatewayError): Promise<never> {
  throw await recordGuess(services, 'api-key', context, now, refusal);
}

/** 403 `ip_not_allowed` when the key has an IP allowlist the caller's address is outside. */
export function enforceIpAllowlist(context: Pick<RequestContext, 'clientIp'>, key: ApiKey): void {
  if (key.ipAllowlist === null) return;
  let allowlist = compiledAllowlists.get(key);
  if (allowlist === undefined) compiledAllowlists.set(key, (allowlist = new IpRangeSet(key.ipAllowlist)));
  if (!allowlist.has(context.clientIp)) throw new GatewayError('ip_not_allowed', 'Requests from this IP address are not allowed for this API key.');
}

/**
 * The caller of a live session (opened with `key`, or with a client secret it minted) checked again, as `authenticate`
 * checks every request: the key as the verifier knows it now (revoked, expired, disabled, its account disabled or
 * deleted; from its cache, so no database round trip while the key is cached, and a change made on any instance
 * reaches it) and the key's IP allowlist now. The browser's origin was checked when the session opened and cannot
 * change. Throws the same refusal a request would get.
 */
export async function reauthenticate(context: Pick<RequestContext, 'clientIp' | 'family'>, services: GatewayServices, key: ApiKey): Promise<Authenticated> {
  const verification = await services.keys.verifyHash(key.secretHash);
  if (!verification.ok) throw REFUSALS[verification.reason === 'unknown' ? 'revoked' : verification.reason](context.family);
  enforceIpAllowlist(context, verification.key);
  return { key: verification.key, account: verification.account };
}
