import { readFile } from 'node:fs/promises';
import { sql, type Kysely, type Selectable } from 'kysely';
import { toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { BatchDatabase, FilesTable } from '../batch-schema.js';
import { FILE_PURPOSES, type FileContentStore, type FileRepository, type StoredFile } from '../../domain/files.js';

function toRecord(row: Selectable<FilesTable>): StoredFile {
  return {
    id: row.id,
    accountId: row.account_id,
    purpose: toOneOf(row.purpose, FILE_PURPOSES, 'file purpose'),
    filename: row.filename,
    bytes: toNumber(row.bytes),
    store: row.store,
    createdAt: toNumber(row.created_at),
    expiresAt: toNullableNumber(row.expires_at),
    ...(row.mime_type === null ? {} : { mimeType: row.mime_type }),
  };
}

/** Files that have not expired at `now`. */
const live = (now: number) => sql<boolean>`("expires_at" is null or "expires_at" > ${now})`;

export function createFileRepository(db: Kysely<BatchDatabase>, dialect: 'sqlite' | 'postgres'): FileRepository {
  return {
    async insertWithinQuota(file, quotaBytes, now) {
      return db.transaction().execute(async (transaction) => {
        // The account's row is locked on PostgreSQL so two uploads racing cannot both fit in the last of the quota
        // (SQLite runs one writing transaction at a time).
        if (dialect === 'postgres') await sql`select "id" from "accounts" where "id" = ${file.accountId} for update`.execute(transaction);
        const used = await transaction.selectFrom('files').select(sql<string | number | bigint>`coalesce(sum("bytes"), 0)`.as('used'))
          .where('account_id', '=', file.accountId).where(live(now)).executeTakeFirstOrThrow();
        if (toNumber(used.used) + file.bytes > quotaBytes) return false;
        await transaction.insertInto('files').values({
          id: file.id, account_id: file.accountId, purpose: file.purpose, filename: file.filename, bytes: file.bytes,
          store: file.store, created_at: file.createdAt, expires_at: file.expiresAt, mime_type: file.mimeType ?? null,
        }).execute();
        return true;
      });
    },

    async get(accountId, fileId, now) {
      const row = await db.selectFrom('files').selectAll().where('id', '=', fileId).where('account_id', '=', accountId).where(live(now)).executeTakeFirst();
      return row === undefined ? null : toRecord(row);
    },

    async list({ accountId, purpose, order, limit, after, now }) {
      let query = db.selectFrom('files').selectAll().where('account_id', '=', accountId).where(live(now));
      if (purpose !== undefined) query = query.where('purpose', '=', purpose);
      if (after !== undefined) {
        const anchor = await db.selectFrom('files').select(['created_at', 'id']).where('id', '=', after).where('account_id', '=', accountId).executeTakeFirst();
        if (anchor === undefined) return [];
        const createdAt = toNumber(anchor.created_at);
        query = order === 'desc'
          ? query.where((where) => where.or([where('created_at', '<', createdAt), where.and([where('created_at', '=', createdAt), where('id', '<', after)])]))
          : query.where((where) => where.or([where('created_at', '>', createdAt), where.and([where('created_at', '=', createdAt), where('id', '>', after)])]));
      }
      const rows = await query.orderBy('created_at', order).orderBy('id', order).limit(limit + 1).execute();
      return rows.map(toRecord);
    },

    async delete(accountId, fileId) {
      const result = await db.deleteFrom('files').where('id', '=', fileId).where('account_id', '=', accountId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },

    async takeExpired(now, limit) {
      const rows = await db.selectFrom('files').selectAll().where('expires_at', '<=', now).orderBy('expires_at').limit(limit).execute();
      if (rows.length === 0) return [];
      await db.deleteFrom('files').where('id', 'in', rows.map((row) => row.id)).where('expires_at', '<=', now).execute();
      return rows.map(toRecord);
    },
  };
}

/** File bytes kept in the database (`file_contents`), for deployments without a bucket. */
export function databaseFileStore(db: Kysely<BatchDatabase>): FileContentStore {
  const get = async (fileId: string): Promise<Buffer | null> => {
    const row = await db.selectFrom('file_contents').select('content').where('file_id', '=', fileId).executeTakeFirst();
    return row === undefined ? null : Buffer.from(row.content.buffer, row.content.byteOffset, row.content.byteLength);
  };
  return {
    name: 'database',
    async put(fileId, body) {
      // A database row takes its value whole: a spooled upload is read into memory here.
      const content = body instanceof Uint8Array ? body : await readFile(body.path);
      await db.insertInto('file_contents').values({ file_id: fileId, content }).execute();
    },
    get,
    async open(fileId) {
      const content = await get(fileId);
      if (content === null) return null;
      return (async function* whole() {
        yield content;
      })();
    },
    async delete(fileIds) {
      if (fileIds.length === 0) return;
      await db.deleteFrom('file_contents').where('file_id', 'in', [...fileIds]).execute();
    },
  };
}
