import type { Kysely } from 'kysely';
import { parseStringRecord, toJson, toNumber } from '../convert.js';
import type { Database } from '../database-schema.js';
import type { FxRepository } from '../storage.js';

/** The table holds at most one row, with this id. */
const ROW_ID = 1;

export function createFxRepository(db: Kysely<Database>): FxRepository {
  return {
    async get() {
      const row = await db.selectFrom('fx_rates').selectAll().where('id', '=', ROW_ID).executeTakeFirst();
      if (row === undefined) return null;
      if (row.base !== 'USD') throw new TypeError(`Storage: unexpected fx base "${row.base}"`);
      return {
        base: row.base,
        rates: parseStringRecord(row.rates, 'fx_rates.rates'),
        asOf: toNumber(row.as_of),
        source: row.source,
        updatedAt: toNumber(row.updated_at),
      };
    },

    async set(rates) {
      const values = {
        base: rates.base,
        rates: toJson(rates.rates),
        as_of: rates.asOf,
        source: rates.source,
        updated_at: rates.updatedAt,
      };
      await db
        .insertInto('fx_rates')
        .values({ id: ROW_ID, ...values })
        .onConflict((conflict) => conflict.column('id').doUpdateSet(values))
        .execute();
    },
  };
}
