import type { Kysely } from 'kysely';
import type { BillingProfile } from '../../domain/commerce-records.js';
import type { CommerceDatabase } from '../commerce-schema.js';
import { toBillingProfile } from './commerce-rows.js';

/** The buyer details printed on an account's future invoices (issued invoices keep the details they were issued with). */
export interface BillingProfileRepository {
  get(accountId: string): Promise<BillingProfile | null>;
  put(profile: BillingProfile): Promise<void>;
  /** Forgets the buyer details (a deleted account's personal data); issued invoices keep theirs. */
  erase(accountId: string): Promise<void>;
}

export function createBillingProfileRepository(db: Kysely<CommerceDatabase>): BillingProfileRepository {
  return {
    async get(accountId) {
      const row = await db.selectFrom('billing_profiles').selectAll().where('account_id', '=', accountId).executeTakeFirst();
      return row === undefined ? null : toBillingProfile(row);
    },

    async erase(accountId) {
      await db.deleteFrom('billing_profiles').where('account_id', '=', accountId).execute();
    },

    async put(profile) {
      const values = {
        name: profile.name,
        address: profile.address,
        country: profile.country,
        tax_id: profile.taxId,
        email: profile.email,
        updated_at: profile.updatedAt,
      };
      await db.insertInto('billing_profiles').values({ account_id: profile.accountId, ...values })
        .onConflict((conflict) => conflict.column('account_id').doUpdateSet(values)).execute();
    },
  };
}
