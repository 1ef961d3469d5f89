import { createHash, randomInt } from 'node:crypto';
import type { CommerceConfig } from '../config/commerce-config.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import type { Referral, ReferralReward } from '../domain/commerce-records.js';
import type { ReferredSignUp } from '../storage/repositories/referral-repository.js';
import type { Storage } from '../storage/storage.js';

/** Unambiguous letters and digits (no 0/O, 1/I/L). */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;
/** Sign-ups through referral links from one address within this window earn nothing after the first. */
export const REPEATED_IP_WINDOW_MS = 30 * 24 * 3600 * 1000;

export interface SignUpAttribution {
  referredAccountId: string;
  /** The `ref` code the sign-up came with. */
  code: string;
  /** The sign-up's client address. */
  ip: string;
  /** Whether the new account's email is verified at sign-up (see `confirmEmail` for later verification). */
  emailVerified: boolean;
}

export type AttributionResult =
  | { attributed: true; referrerAccountId: string; status: Referral['status'] }
  | { attributed: false; reason: 'unknown_code' | 'self_referral' | 'already_attributed' };

export interface ReferralOverview {
  code: string;
  referred: ReferredSignUp[];
  rewards: ReferralReward[];
}

export function normaliseReferralCode(code: string): string {
  return code.trim().toUpperCase();
}

function newCode(): string {
  let code = '';
  for (let index = 0; index < CODE_LENGTH; index += 1) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}

/**
 * Referral codes and the attribution of sign-ups to them. Rewards are paid by the top-up webhook (in its
 * transaction) from what is recorded here; nothing here moves money.
 */
export class ReferralProgram {
  constructor(
    private readonly storage: Storage,
    private readonly config: CommerceConfig,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** The account's code, created on first use. */
  async codeOf(accountId: string): Promise<string> {
    const existing = await this.storage.referrals.codeOf(accountId);
    if (existing !== null) return existing;
    for (let attempt = 0; attempt < 5; attempt += 1) {
      try {
        return await this.storage.referrals.ensureCode(accountId, newCode(), this.clock.now());
      } catch (error) {
        // Another account drew the same code (unique violation): draw again.
        if (attempt === 4) throw error;
      }
    }
    throw new Error('unreachable');
  }

  /** The link a referrer shares: the console's sign-up page with the code. */
  link(code: string, consoleBase: string): string {
    return `${consoleBase}/sign-up?ref=${encodeURIComponent(code)}`;
  }

  /**
   * Attributes a new account's sign-up to the code's owner, once. Called by the console's sign-up after the account
   * exists. Self-referral and unknown codes are refused; a sign-up from an address that already signed up through a
   * referral link within 30 days is recorded but earns nothing, and so does one whose email is never verified.
   */
  async attributeSignUp(signUp: SignUpAttribution): Promise<AttributionResult> {
    const referrerAccountId = await this.storage.referrals.accountByCode(normaliseReferralCode(signUp.code));
    if (referrerAccountId === null) return { attributed: false, reason: 'unknown_code' };
    if (referrerAccountId === signUp.referredAccountId) return { attributed: false, reason: 'self_referral' };
    const now = this.clock.now();
    const outcome = await this.storage.referrals.attribute({
      referredAccountId: signUp.referredAccountId,
      referrerAccountId,
      ipHash: createHash('sha256').update(`referral-ip:${signUp.ip}`).digest('hex'),
      emailVerified: signUp.emailVerified,
      createdAt: now,
    }, now - REPEATED_IP_WINDOW_MS);
    if (!outcome.attributed) return { attributed: false, reason: outcome.reason };
    if (outcome.referral.status !== 'eligible') this.logger.info('referral from a repeated address earns nothing', { referrer: referrerAccountId, referred: signUp.referredAccountId });
    return { attributed: true, referrerAccountId, status: outcome.referral.status };
  }

  /** The referred account verified its email after sign-up: its paid top-ups earn the referrer's reward from now on. */
  async confirmEmail(referredAccountId: string): Promise<void> {
    await this.storage.referrals.markEmailVerified(referredAccountId);
  }

  async overview(accountId: string, limit = 100): Promise<ReferralOverview> {
    const [code, referred, rewards] = await Promise.all([
      this.codeOf(accountId),
      this.storage.referrals.listReferred(accountId, limit),
      this.storage.referrals.listRewards(accountId, limit),
    ]);
    return { code, referred, rewards };
  }

  get policy(): CommerceConfig['referralReward'] {
    return this.config.referralReward;
  }
}
