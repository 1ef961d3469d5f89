import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';
import type { DisplayCurrencyRepository } from '../storage.js';

export function createDisplayCurrencyRepository(db: Kysely<Database>): DisplayCurrencyRepository {
  return {
    async get(accountId) {
      const row = await db.selectFrom('account_display_currency').select('currency').where('account_id', '=', accountId).executeTakeFirst();
      return row?.currency ?? null;
    },

    async set(accountId, currency, now) {
      if (currency === null) {
        await db.deleteFrom('account_display_currency').where('account_id', '=', accountId).execute();
        return;
      }
      await db.insertInto('account_display_currency')
        .values({ account_id: accountId, currency, updated_at: now })
        .onConflict((conflict) => conflict.column('account_id').doUpdateSet({ currency, updated_at: now }))
        .execute();
    },
  };
}
