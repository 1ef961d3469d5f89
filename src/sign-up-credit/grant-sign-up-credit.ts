import { nanoToUsd } from '../billing/money.js';
import type { SignUpCreditConfig } from '../config/commerce-config.js';
import { isoTime } from '../management/time-input.js';
import type { NanoUsd } from '../domain/records.js';
import type { GatewayServices } from '../services.js';
import { newId } from '../shared/ids.js';
import { signUpAddressHash, signUpEmailHash } from './sign-up-identity.js';
import type { SignUpCreditJson } from '../contract/account.js';

const DAY_MS = 86_400_000;

export type SignUpCreditOutcome =
  | { granted: true; amountNano: NanoUsd; expiresAt: number | null }
  | { granted: false; reason: 'off' | 'not_signed_up_in_console' | 'account_not_enabled' | 'already_granted' | 'email_used' | 'address_used' | 'no_account' };

/** The credit and its lifetime for an account of `tier`: the tier's own where it sets them, else the gateway's. */
export async function signUpCreditFor(services: Pick<GatewayServices, 'storage'>, config: SignUpCreditConfig, tierName: string): Promise<{ amountNano: NanoUsd; days: number | null }> {
  const tier = await services.storage.tiers.getByName(tierName);
  return { amountNano: tier?.signupCreditNano ?? config.amountNano, days: tier?.signupCreditDays ?? config.days };
}

/**
 * Gives an account made by console sign-up its sign-up credit, once its owner's email is verified: never to an
 * account made otherwise, never twice for one mailbox (even after the account is deleted), and not to a second
 * account from an address that earned one within the address window (the sign-up's address and the verifier's).
 * One storage transaction claims, records and credits, so two instances verifying at once give it once.
 */
export async function grantSignUpCredit(
  services: Pick<GatewayServices, 'storage' | 'ledger' | 'clock' | 'logger' | 'config'>,
  request: { accountId: string; email: string; verifiedFromIp: string },
): Promise<SignUpCreditOutcome> {
  const { storage, clock, logger } = services;
  const config = services.config.commerce.signUpCredit;
  const account = await storage.accounts.getById(request.accountId);
  if (account === null) return { granted: false, reason: 'no_account' };
  const { amountNano, days } = await signUpCreditFor(services, config, account.tier);
  if (amountNano <= 0n) return { granted: false, reason: 'off' };
  const signUpAddress = await storage.signUpCredits.signUpAddress(request.accountId);
  if (signUpAddress === null) return { granted: false, reason: 'not_signed_up_in_console' };
  if (account.status !== 'enabled') return { granted: false, reason: 'account_not_enabled' };
  const now = clock.now();
  const expiresAt = days === null ? null : now + days * DAY_MS;
  const outcome = await storage.signUpCredits.grant({
    accountId: request.accountId,
    emailHash: signUpEmailHash(request.email),
    ipHashes: [signUpAddress, signUpAddressHash(request.verifiedFromIp)],
    addressWindowMs: config.addressWindowDays * DAY_MS,
    amountNano,
    expiresAt,
    entryId: newId('led', now),
    reason: expiresAt === null ? 'Sign-up credit' : `Sign-up credit, until ${new Date(expiresAt).toISOString().slice(0, 10)}`,
    now,
  });
  if (!outcome.granted) {
    if (outcome.reason !== 'already_granted') await storage.signUpCredits.recordRefusal(request.accountId, outcome.reason);
    logger.info('sign-up credit not given', { account: request.accountId, reason: outcome.reason });
    return outcome;
  }
  services.ledger.forgetBalance(request.accountId);
  logger.info('sign-up credit given', { account: request.accountId, amountNano: amountNano.toString() });
  return { granted: true, amountNano, expiresAt };
}

/**
 * The sign-up credit as the account's owner sees it: `offered` (verify the email to get it), `granted` (with its
 * expiry), `expired` (what was taken back); null when the account has none and will get none.
 */
export async function signUpCreditView(services: Pick<GatewayServices, 'storage' | 'config'>, account: { id: string; tier: string }): Promise<SignUpCreditJson | null> {
  const grant = await services.storage.signUpCredits.getGrant(account.id);
  if (grant !== null) {
    return {
      state: grant.reclaimedAt === null ? 'granted' : 'expired',
      amount_usd: nanoToUsd(grant.amountNano),
      granted_at: isoTime(grant.createdAt),
      expires_at: grant.expiresAt === null ? null : isoTime(grant.expiresAt),
      taken_back_usd: nanoToUsd(grant.reclaimedNano),
    };
  }
  if (await services.storage.signUpCredits.signUpAddress(account.id) === null) return null;
  const refusal = await services.storage.signUpCredits.refusal(account.id);
  // Given once per person: this mailbox or address already had it.
  if (refusal !== null) return { state: 'not_given', reason: refusal };
  const { amountNano, days } = await signUpCreditFor(services, services.config.commerce.signUpCredit, account.tier);
  return amountNano <= 0n ? null : { state: 'offered', amount_usd: nanoToUsd(amountNano), days };
}
