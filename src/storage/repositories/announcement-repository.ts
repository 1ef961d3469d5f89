import type { Kysely } from 'kysely';
import type { AnnouncementsTable, Database } from '../database-schema.js';
import { integer, nullableInteger, oneOf, recordMapping, text } from './record-columns.js';
import { tableAccess, type TableMapping } from './table-access.js';
import type { Announcement } from '../../domain/records.js';
import type { AnnouncementRepository } from '../storage.js';

const LEVELS: readonly Announcement['level'][] = ['info', 'warning', 'critical'];

/** Announcements are never edited: no patch, no changes. */
const { toRecord, toRow } = recordMapping<AnnouncementsTable, Announcement>({
  id: text, title: text, body: text, level: oneOf(LEVELS, 'announcement level'), publishedAt: integer, expiresAt: nullableInteger, createdAt: integer,
});

const ANNOUNCEMENTS: TableMapping<'announcements', Announcement, never> = {
  table: 'announcements', key: 'id', keyOf: (announcement) => announcement.id, toRecord, toRow,
};

export function createAnnouncementRepository(db: Kysely<Database>): AnnouncementRepository {
  const announcements = tableAccess(db, ANNOUNCEMENTS);
  return {
    create: announcements.insert,

    async listActive(now, limit) {
      if (!(limit > 0)) return [];
      const rows = await db
        .selectFrom('announcements')
        .selectAll()
        .where('published_at', '<=', now)
        .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
        .orderBy('published_at', 'desc')
        .orderBy('id', 'desc')
        .limit(Math.floor(limit))
        .execute();
      return rows.map(toRecord);
    },

    list: (page) => announcements.page(page),
    delete: announcements.delete,

    async dismiss(userId, announcementId, at) {
      await db.insertInto('announcement_dismissals')
        .values({ user_id: userId, announcement_id: announcementId, dismissed_at: at })
        .onConflict((conflict) => conflict.columns(['user_id', 'announcement_id']).doNothing())
        .execute();
    },

    async dismissedBy(userId, announcementIds) {
      if (announcementIds.length === 0) return new Set();
      const rows = await db.selectFrom('announcement_dismissals').select('announcement_id')
        .where('user_id', '=', userId).where('announcement_id', 'in', [...announcementIds]).execute();
      return new Set(rows.map((row) => row.announcement_id));
    },
  };
}
