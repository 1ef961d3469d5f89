import type { Kysely } from 'kysely';
import type { Database } from '../database-schema.js';
import type { SettingsRepository } from '../storage.js';

export function createSettingsRepository(db: Kysely<Database>): SettingsRepository {
  return {
    async get(key) {
      const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
      return row === undefined ? null : row.value;
    },

    async set(key, value, now) {
      await db
        .insertInto('settings')
        .values({ key, value, updated_at: now })
        .onConflict((conflict) => conflict.column('key').doUpdateSet({ value, updated_at: now }))
        .execute();
    },
  };
}
