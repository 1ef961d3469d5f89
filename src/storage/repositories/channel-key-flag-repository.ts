import type { Kysely } from 'kysely';
import { toNumber } from '../convert.js';
import type { Database } from '../database-schema.js';
import type { ChannelKeyFlagRepository } from '../storage.js';

export function createChannelKeyFlagRepository(db: Kysely<Database>): ChannelKeyFlagRepository {
  return {
    async listAll() {
      const rows = await db.selectFrom('channel_key_flags').selectAll().orderBy('channel_id').orderBy('key_index').execute();
      return rows.map((row) => ({
        channelId: row.channel_id,
        keyFingerprint: row.key_fingerprint,
        keyIndex: toNumber(row.key_index),
        reason: row.reason,
        flaggedAt: toNumber(row.flagged_at),
      }));
    },

    async add(flag) {
      await db
        .insertInto('channel_key_flags')
        .values({ channel_id: flag.channelId, key_fingerprint: flag.keyFingerprint, key_index: flag.keyIndex, reason: flag.reason, flagged_at: flag.flaggedAt })
        .onConflict((conflict) => conflict.columns(['channel_id', 'key_fingerprint']).doNothing())
        .execute();
    },

    async clearChannel(channelId) {
      await db.deleteFrom('channel_key_flags').where('channel_id', '=', channelId).execute();
    },
  };
}
