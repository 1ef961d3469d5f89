import type { Kysely } from 'kysely';

/**
 * A referral reward is taken back, in the same share, when the top-up that earned it is refunded or disputed:
 * `referral_rewards.reversed_nano` is how much of it has been taken back so far (0 for every reward paid until now).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('referral_rewards').addColumn('reversed_nano', 'bigint', (column) => column.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('referral_rewards').dropColumn('reversed_nano').execute();
}
