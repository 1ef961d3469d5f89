import { sql, type Kysely } from 'kysely';
import type { Referral, ReferralReward } from '../../domain/commerce-records.js';
import type { CommerceDatabase } from '../commerce-schema.js';
import { fromBoolean, toBigInt, toNumber } from '../convert.js';
import type { NanoUsd } from '../../domain/records.js';
import { toReferral, toReferralReward } from './commerce-rows.js';

type Dialect = 'sqlite' | 'postgres';

export interface ReferredSignUp extends Referral {
  rewardedNano: NanoUsd;
  rewardCount: number;
}

export type AttributionOutcome = { attributed: true; referral: Referral } | { attributed: false; reason: 'already_attributed' };

export interface ReferralRepository {
  codeOf(accountId: string): Promise<string | null>;
  /** Stores the code unless the account has one; returns the account's code either way. */
  ensureCode(accountId: string, code: string, now: number): Promise<string>;
  accountByCode(code: string): Promise<string | null>;
  /**
   * Records the attribution once per referred account. Its status is `repeated_ip` when another referral came from
   * the same address hash since `ipWindowStart` (checked and inserted under one lock per address).
   */
  attribute(referral: Omit<Referral, 'status'>, ipWindowStart: number): Promise<AttributionOutcome>;
  markEmailVerified(referredAccountId: string): Promise<boolean>;
  /** Who referred this account, if anyone. */
  attributionOf(referredAccountId: string): Promise<Referral | null>;
  /** The referrer's referred sign-ups, newest first, with what each has earned so far. */
  listReferred(referrerAccountId: string, limit: number): Promise<ReferredSignUp[]>;
  listRewards(referrerAccountId: string, limit: number): Promise<ReferralReward[]>;
}

export function createReferralRepository(db: Kysely<CommerceDatabase>, dialect: Dialect): ReferralRepository {
  const codeOf = async (accountId: string): Promise<string | null> => {
    const row = await db.selectFrom('referral_codes').select('code').where('account_id', '=', accountId).executeTakeFirst();
    return row?.code ?? null;
  };
  return {
    codeOf,

    async ensureCode(accountId, code, now) {
      await db.insertInto('referral_codes').values({ account_id: accountId, code, created_at: now })
        .onConflict((conflict) => conflict.column('account_id').doNothing()).execute();
      return (await codeOf(accountId)) ?? code;
    },

    async accountByCode(code) {
      const row = await db.selectFrom('referral_codes').select('account_id').where('code', '=', code).executeTakeFirst();
      return row?.account_id ?? null;
    },

    attribute(referral, ipWindowStart) {
      return db.transaction().execute(async (trx): Promise<AttributionOutcome> => {
        // SQLite's transaction holds the write lock already; PostgreSQL serialises sign-ups per address here.
        if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext(${`referral-ip:${referral.ipHash}`}))`.execute(trx);
        const earlier = await trx.selectFrom('referrals').select('referred_account_id')
          .where('ip_hash', '=', referral.ipHash).where('created_at', '>=', ipWindowStart).limit(1).executeTakeFirst();
        const stored: Referral = { ...referral, status: earlier === undefined ? 'eligible' : 'repeated_ip' };
        const inserted = await trx.insertInto('referrals').values({
          referred_account_id: stored.referredAccountId,
          referrer_account_id: stored.referrerAccountId,
          ip_hash: stored.ipHash,
          email_verified: fromBoolean(stored.emailVerified),
          status: stored.status,
          created_at: stored.createdAt,
        }).onConflict((conflict) => conflict.column('referred_account_id').doNothing()).returning('referred_account_id').executeTakeFirst();
        return inserted === undefined ? { attributed: false, reason: 'already_attributed' } : { attributed: true, referral: stored };
      });
    },

    async markEmailVerified(referredAccountId) {
      const updated = await db.updateTable('referrals').set({ email_verified: 1 }).where('referred_account_id', '=', referredAccountId).returning('referred_account_id').executeTakeFirst();
      return updated !== undefined;
    },

    async attributionOf(referredAccountId) {
      const row = await db.selectFrom('referrals').selectAll().where('referred_account_id', '=', referredAccountId).executeTakeFirst();
      return row === undefined ? null : toReferral(row);
    },

    async listReferred(referrerAccountId, limit) {
      const rows = await db.selectFrom('referrals').selectAll('referrals')
        .select((expression) => [
          expression.selectFrom('referral_rewards').select(sql<bigint | string>`coalesce(sum(${sql.ref('amount_nano')} - ${sql.ref('reversed_nano')}), 0)`.as('total'))
            .whereRef('referral_rewards.referred_account_id', '=', 'referrals.referred_account_id').as('rewarded'),
          expression.selectFrom('referral_rewards').select(sql<number | bigint | string>`count(*)`.as('count'))
            .whereRef('referral_rewards.referred_account_id', '=', 'referrals.referred_account_id').as('reward_count'),
        ])
        .where('referrer_account_id', '=', referrerAccountId)
        .orderBy('created_at', 'desc')
        .limit(limit)
        .execute();
      return rows.map((row) => ({ ...toReferral(row), rewardedNano: toBigInt(row.rewarded ?? 0n), rewardCount: toNumber(row.reward_count ?? 0) }));
    },

    async listRewards(referrerAccountId, limit) {
      const rows = await db.selectFrom('referral_rewards').selectAll().where('referrer_account_id', '=', referrerAccountId).orderBy('created_at', 'desc').limit(limit).execute();
      return rows.map(toReferralReward);
    },
  };
}
