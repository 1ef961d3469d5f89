import type { Kysely, Selectable } from 'kysely';
import { toNumber } from '../convert.js';
import type { BatchDatabase, FileUploadsTable } from '../batch-schema.js';
import type { FileUpload, FileUploadRepository } from '../../domain/files.js';

function toRecord(row: Selectable<FileUploadsTable>): FileUpload {
  return {
    id: row.id,
    accountId: row.account_id,
    displayName: row.display_name,
    mimeType: row.mime_type,
    declaredBytes: toNumber(row.declared_bytes),
    receivedBytes: toNumber(row.received_bytes),
    createdAt: toNumber(row.created_at),
    expiresAt: toNumber(row.expires_at),
  };
}

export function createFileUploadRepository(db: Kysely<BatchDatabase>): FileUploadRepository {
  return {
    async create(upload) {
      await db.insertInto('file_uploads').values({
        id: upload.id, account_id: upload.accountId, display_name: upload.displayName, mime_type: upload.mimeType,
        declared_bytes: upload.declaredBytes, received_bytes: upload.receivedBytes, created_at: upload.createdAt, expires_at: upload.expiresAt,
      }).execute();
    },

    async get(accountId, uploadId, now) {
      const row = await db.selectFrom('file_uploads').selectAll().where('id', '=', uploadId).where('account_id', '=', accountId).where('expires_at', '>', now)
        .where('received_bytes', '>=', 0).executeTakeFirst();
      return row === undefined ? null : toRecord(row);
    },

    async append(accountId, uploadId, offset, content) {
      return db.transaction().execute(async (transaction) => {
        // Only the request whose offset is the bytes received so far moves it on: a repeated or racing chunk loses.
        const moved = await transaction.updateTable('file_uploads').set({ received_bytes: offset + content.byteLength })
          .where('id', '=', uploadId).where('account_id', '=', accountId).where('received_bytes', '=', offset).executeTakeFirst();
        if (Number(moved.numUpdatedRows) === 0) return false;
        if (content.byteLength > 0) await transaction.insertInto('file_upload_chunks').values({ upload_id: uploadId, offset, content }).execute();
        return true;
      });
    },

    async claim(accountId, uploadId, now) {
      // Received bytes of -1 mark it taken: no call finds it again and no chunk's offset matches, while its expiry
      // stays, so the sweep leaves the chunks to the finisher (and removes them a day on if the finisher stopped).
      const claimed = await db.updateTable('file_uploads').set({ received_bytes: -1 })
        .where('id', '=', uploadId).where('account_id', '=', accountId).where('expires_at', '>', now)
        .whereRef('received_bytes', '=', 'declared_bytes').executeTakeFirst();
      return Number(claimed.numUpdatedRows) > 0;
    },

    async *chunks(uploadId) {
      let after = -1;
      for (;;) {
        const row = await db.selectFrom('file_upload_chunks').select(['offset', 'content']).where('upload_id', '=', uploadId).where('offset', '>', after)
          .orderBy('offset').limit(1).executeTakeFirst();
        if (row === undefined) return;
        after = toNumber(row.offset);
        yield row.content;
      }
    },

    async delete(uploadId) {
      await db.deleteFrom('file_upload_chunks').where('upload_id', '=', uploadId).execute();
      await db.deleteFrom('file_uploads').where('id', '=', uploadId).execute();
    },

    async sweep(now, limit) {
      const rows = await db.selectFrom('file_uploads').select('id').where('expires_at', '<=', now).limit(limit).execute();
      for (const { id } of rows) {
        await db.deleteFrom('file_upload_chunks').where('upload_id', '=', id).execute();
        await db.deleteFrom('file_uploads').where('id', '=', id).execute();
      }
      return rows.length;
    },
  };
}
