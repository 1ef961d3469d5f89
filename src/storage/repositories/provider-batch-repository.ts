import { sql, type Kysely, type Selectable } from 'kysely';
import { BATCH_PROVIDERS, PROVIDER_BATCH_STATES, type ProviderBatch, type ProviderBatchRepository } from '../../domain/provider-batches.js';
import type { Database } from '../database-schema.js';
import type { ProviderBatchesTable, ProviderBatchTables } from '../batch-schema.js';
import { toNumber, toOneOf } from '../convert.js';

function toRecord(row: Selectable<ProviderBatchesTable>): ProviderBatch {
  return {
    batchId: row.batch_id,
    channelId: row.channel_id,
    provider: toOneOf(row.provider, BATCH_PROVIDERS, 'batch provider'),
    state: toOneOf(row.state, PROVIDER_BATCH_STATES, 'provider batch state'),
    upstreamFileId: row.upstream_file_id,
    upstreamBatchId: row.upstream_batch_id,
    upstreamStatus: row.upstream_status,
    cancelSent: toNumber(row.cancel_sent) === 1,
    nextAt: toNumber(row.next_at),
    error: row.error,
    submitStartedAt: row.submit_started_at === null ? null : toNumber(row.submit_started_at),
  };
}

export function createProviderBatchRepository(db: Kysely<Database & ProviderBatchTables>): ProviderBatchRepository {
  return {
    async create(batch) {
      await db.insertInto('provider_batches').values({
        batch_id: batch.batchId, channel_id: batch.channelId, provider: batch.provider, state: batch.state, upstream_file_id: batch.upstreamFileId,
        upstream_batch_id: batch.upstreamBatchId, upstream_status: batch.upstreamStatus, cancel_sent: batch.cancelSent ? 1 : 0, next_at: batch.nextAt,
        lease_owner: null, lease_until: null, error: batch.error, submit_started_at: batch.submitStartedAt,
      }).execute();
    },

    async get(batchId) {
      const row = await db.selectFrom('provider_batches').selectAll().where('batch_id', '=', batchId).executeTakeFirst();
      return row === undefined ? null : toRecord(row);
    },

    async claimDue(owner, now, leaseUntil) {
      const due = await db.selectFrom('provider_batches').select('batch_id')
        .where('state', 'in', ['submit', 'running', 'collect']).where('next_at', '<=', now)
        .where((where) => where.or([where('lease_until', 'is', null), where('lease_until', '<=', now)]))
        .orderBy('next_at').limit(5).execute();
      for (const { batch_id: batchId } of due) {
        // Conditional on the lease still being free: of two instances, one takes it.
        const row = await db.updateTable('provider_batches').set({ lease_owner: owner, lease_until: leaseUntil })
          .where('batch_id', '=', batchId).where((where) => where.or([where('lease_until', 'is', null), where('lease_until', '<=', now)]))
          .returningAll().executeTakeFirst();
        if (row !== undefined) return toRecord(row);
      }
      return null;
    },

    async markSubmitting(batchId, owner, at) {
      const result = await db.updateTable('provider_batches').set({ submit_started_at: at })
        .where('batch_id', '=', batchId).where('lease_owner', '=', owner).where('state', '=', 'submit').executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async upstreamTaken(channelId, upstreamBatchId, exceptBatchId) {
      const row = await db.selectFrom('provider_batches').select('batch_id')
        .where('channel_id', '=', channelId).where('upstream_batch_id', '=', upstreamBatchId).where('batch_id', '<>', exceptBatchId).executeTakeFirst();
      return row !== undefined;
    },

    async update(batchId, owner, change) {
      const result = await db.updateTable('provider_batches').set({
        ...(change.state === undefined ? {} : { state: change.state }),
        ...(change.upstreamFileId === undefined ? {} : { upstream_file_id: change.upstreamFileId }),
        ...(change.upstreamBatchId === undefined ? {} : { upstream_batch_id: change.upstreamBatchId }),
        ...(change.upstreamStatus === undefined ? {} : { upstream_status: change.upstreamStatus }),
        ...(change.cancelSent === undefined ? {} : { cancel_sent: change.cancelSent ? 1 : 0 }),
        ...(change.nextAt === undefined ? {} : { next_at: change.nextAt }),
        ...(change.error === undefined ? {} : { error: change.error }),
        lease_owner: null, lease_until: null,
      }).where('batch_id', '=', batchId).where('lease_owner', '=', owner).executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async cancel(accountId, batchId, now) {
      const cancelled = await db.transaction().execute(async (transaction) => {
        const result = await transaction.updateTable('batches').set({ status: 'cancelling', cancelling_at: now })
          .where('id', '=', batchId).where('account_id', '=', accountId).where('status', 'in', ['validating', 'in_progress']).executeTakeFirst();
        if (Number(result.numUpdatedRows) === 0) return false;
        // The lines of the queue's part that never started will not run (the provider's part is closed by its runner).
        await transaction.updateTable('batch_lines').set({ state: 'cancelled' }).where('batch_id', '=', batchId).where('via_provider', '=', 0).where('state', '=', 'pending').execute();
        return true;
      });
      if (!cancelled) return false;
      // Looked at again now, so the cancel reaches the provider within one pass.
      await db.updateTable('provider_batches').set({ next_at: now }).where('batch_id', '=', batchId).where('state', '=', 'running').execute();
      return true;
    },

    async takeLine(batchId, line, owner, now, leaseUntil) {
      const result = await db.updateTable('batch_lines').set({ state: 'running', lease_owner: owner, lease_until: leaseUntil, attempts: sql<number>`"attempts" + 1` })
        .where('batch_id', '=', batchId).where('line', '=', line).where('via_provider', '=', 1)
        .where((where) => where.or([where('state', '=', 'pending'), where.and([where('state', '=', 'running'), where('lease_until', '<=', now)])]))
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    async batchOf(batchId) {
      const row = await db.selectFrom('batches').select(['account_id', 'key_id', 'endpoint', 'status']).where('id', '=', batchId).executeTakeFirst();
      return row === undefined ? null : { accountId: row.account_id, keyId: row.key_id, endpoint: row.endpoint, status: row.status };
    },

    async openLines(batchId) {
      const rows = await db.selectFrom('batch_lines').select(['line', 'custom_id', 'body']).where('batch_id', '=', batchId).where('via_provider', '=', 1).where('state', 'in', ['pending', 'running']).orderBy('line').execute();
      return rows.map((row) => ({ line: toNumber(row.line), customId: row.custom_id, body: row.body }));
    },

    async closePendingLines(batchId, state, result, now) {
      return db.transaction().execute(async (transaction) => {
        const closed = await transaction.updateTable('batch_lines')
          .set({ state, result, status_code: state === 'failed' ? 500 : null, lease_owner: null, lease_until: null, finished_at: now })
          .where('batch_id', '=', batchId).where('via_provider', '=', 1).where('state', 'in', ['pending', 'running']).executeTakeFirst();
        const count = Number(closed.numUpdatedRows);
        if (state === 'failed' && count > 0) await transaction.updateTable('batches').set({ failed: sql<number>`"failed" + ${count}` }).where('id', '=', batchId).execute();
        return count;
      });
    },
  };
}
