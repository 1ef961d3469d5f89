import { sql, type Kysely, type Selectable } from 'kysely';
import { toBigInt, toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { BatchDatabase, BatchesTable } from '../batch-schema.js';
import { chunk, rowsPerStatement } from '../pagination.js';
import {
  BATCH_ENDPOINTS, BATCH_STATUSES, ENDED_BATCH_STATUSES, type Batch, type BatchInputError, type BatchLineCounts, type BatchRepository, type ClaimedLine, type FinishedLine,
} from '../../domain/batches.js';

function toRecord(row: Selectable<BatchesTable>): Batch {
  return {
    id: row.id,
    accountId: row.account_id,
    keyId: row.key_id,
    endpoint: toOneOf(row.endpoint, BATCH_ENDPOINTS, 'batch endpoint'),
    inputFileId: row.input_file_id,
    completionWindow: row.completion_window,
    status: toOneOf(row.status, BATCH_STATUSES, 'batch status'),
    metadata: row.metadata === null ? null : JSON.parse(row.metadata) as Record<string, string>,
    outputFileId: row.output_file_id,
    errorFileId: row.error_file_id,
    errors: row.errors === null ? null : JSON.parse(row.errors) as BatchInputError[],
    outputExpiresSeconds: toNullableNumber(row.output_expires_seconds),
    total: toNumber(row.total),
    completed: toNumber(row.completed),
    failed: toNumber(row.failed),
    costNano: toBigInt(row.cost_nano),
    tokens: { input: toNumber(row.input_tokens), cached: toNumber(row.cached_tokens), output: toNumber(row.output_tokens), reasoning: toNumber(row.reasoning_tokens) },
    createdAt: toNumber(row.created_at),
    expiresAt: toNumber(row.expires_at),
    inProgressAt: toNullableNumber(row.in_progress_at),
    finalizingAt: toNullableNumber(row.finalizing_at),
    completedAt: toNullableNumber(row.completed_at),
    failedAt: toNullableNumber(row.failed_at),
    expiredAt: toNullableNumber(row.expired_at),
    cancellingAt: toNullableNumber(row.cancelling_at),
    cancelledAt: toNullableNumber(row.cancelled_at),
  };
}

const LINE_COLUMNS = 11;

export function createBatchRepository(db: Kysely<BatchDatabase>, dialect: 'sqlite' | 'postgres'): BatchRepository {
  const lockSkip = sql.raw(dialect === 'postgres' ? 'for update of "l" skip locked' : '');
  return {
    async create(batch, lines) {
      await db.transaction().execute(async (transaction) => {
        await transaction.insertInto('batches').values({
          id: batch.id, account_id: batch.accountId, key_id: batch.keyId, endpoint: batch.endpoint, input_file_id: batch.inputFileId,
          completion_window: batch.completionWindow, status: batch.status, metadata: batch.metadata === null ? null : JSON.stringify(batch.metadata),
          output_file_id: batch.outputFileId, error_file_id: batch.errorFileId, errors: batch.errors === null ? null : JSON.stringify(batch.errors),
          output_expires_seconds: batch.outputExpiresSeconds, total: batch.total, completed: batch.completed, failed: batch.failed,
          cost_nano: batch.costNano, input_tokens: batch.tokens.input, cached_tokens: batch.tokens.cached, output_tokens: batch.tokens.output,
          reasoning_tokens: batch.tokens.reasoning, created_at: batch.createdAt, expires_at: batch.expiresAt, in_progress_at: batch.inProgressAt,
          finalizing_at: batch.finalizingAt, completed_at: batch.completedAt, failed_at: batch.failedAt, expired_at: batch.expiredAt,
          cancelling_at: batch.cancellingAt, cancelled_at: batch.cancelledAt, finalize_owner: null, finalize_until: null,
        }).execute();
        for (const part of chunk(lines, rowsPerStatement(LINE_COLUMNS))) {
          await transaction.insertInto('batch_lines').values(part.map((line) => ({
            batch_id: batch.id, line: line.line, custom_id: line.customId, body: line.body, state: 'pending',
            lease_owner: null, lease_until: null, attempts: 0, status_code: null, request_id: null, result: null, cost_nano: 0n, finished_at: null,
            via_provider: line.viaProvider === true ? 1 : 0,
          }))).execute();
        }
      });
    },

    async get(accountId, batchId) {
      const row = await db.selectFrom('batches').selectAll().where('id', '=', batchId).where('account_id', '=', accountId).executeTakeFirst();
      return row === undefined ? null : toRecord(row);
    },

    async list(accountId, { limit, after, before, endpoints }) {
      let query = db.selectFrom('batches').selectAll().where('account_id', '=', accountId);
      if (endpoints !== undefined) query = query.where('endpoint', 'in', [...endpoints]);
      const anchorId = before ?? after;
      if (anchorId !== undefined) {
        const anchor = await db.selectFrom('batches').select(['created_at', 'id']).where('id', '=', anchorId).where('account_id', '=', accountId).executeTakeFirst();
        if (anchor === undefined) return [];
        const createdAt = toNumber(anchor.created_at);
        query = before === undefined
          ? query.where((where) => where.or([where('created_at', '<', createdAt), where.and([where('created_at', '=', createdAt), where('id', '<', anchorId)])]))
          : query.where((where) => where.or([where('created_at', '>', createdAt), where.and([where('created_at', '=', createdAt), where('id', '>', anchorId)])]));
      }
      if (before !== undefined) {
        // The page just newer than `before`: the nearest ones, read oldest first, given back newest first.
        const rows = await query.orderBy('created_at', 'asc').orderBy('id', 'asc').limit(limit + 1).execute();
        return rows.map(toRecord).reverse();
      }
      const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit + 1).execute();
      return rows.map(toRecord);
    },

    async lineCounts(batchIds) {
      const counts = new Map<string, BatchLineCounts>();
      for (const id of batchIds) counts.set(id, { processing: 0, done: 0, failed: 0, cancelled: 0, expired: 0 });
      if (batchIds.length === 0) return counts;
      const rows = await db.selectFrom('batch_lines').select(['batch_id', 'state', sql<number | bigint | string>`count(*)`.as('count')])
        .where('batch_id', 'in', [...batchIds]).groupBy(['batch_id', 'state']).execute();
      for (const row of rows) {
        const count = counts.get(row.batch_id);
        if (count === undefined) continue;
        const state = row.state === 'pending' || row.state === 'running' ? 'processing' : toOneOf(row.state, ['done', 'failed', 'cancelled', 'expired'] as const, 'batch line state');
        count[state] += toNumber(row.count);
      }
      return counts;
    },

    async delete(accountId, batchId) {
      return db.transaction().execute(async (transaction) => {
        const row = await transaction.selectFrom('batches').select(['status', 'finalize_owner']).where('id', '=', batchId).where('account_id', '=', accountId).executeTakeFirst();
        if (row === undefined) return 'absent';
        const removed = await transaction.deleteFrom('batches').where('id', '=', batchId).where('account_id', '=', accountId)
          .where('status', 'in', [...ENDED_BATCH_STATUSES]).where('finalize_owner', 'is', null).executeTakeFirst();
        if (Number(removed.numDeletedRows) === 0) return 'running';
        await transaction.deleteFrom('batch_lines').where('batch_id', '=', batchId).execute();
        return 'deleted';
      });
    },

    async cancel(accountId, batchId, now) {
      return db.transaction().execute(async (transaction) => {
        const changed = await transaction.updateTable('batches').set({ status: 'cancelling', cancelling_at: now })
          .where('id', '=', batchId).where('account_id', '=', accountId).where('status', 'in', ['validating', 'in_progress'])
          .executeTakeFirst();
        if (Number(changed.numUpdatedRows) > 0) {
          await transaction.updateTable('batch_lines').set({ state: 'cancelled' }).where('batch_id', '=', batchId).where('state', '=', 'pending').execute();
        }
        const row = await transaction.selectFrom('batches').selectAll().where('id', '=', batchId).where('account_id', '=', accountId).executeTakeFirst();
        return row === undefined ? null : toRecord(row);
      });
    },

    async claimLines(owner, now, leaseUntil, limit) {
      return db.transaction().execute(async (transaction) => {
        const picked = await sql<{ batch_id: string; line: number | bigint }>`
          select "l"."batch_id", "l"."line" from "batch_lines" as "l" join "batches" as "b" on "b"."id" = "l"."batch_id"
          where "b"."status" = 'in_progress' and "b"."expires_at" > ${now}
            and ("l"."state" = 'pending' or ("l"."state" = 'running' and "l"."lease_until" <= ${now}))
            and ("l"."via_provider" = 0 or not exists (select 1 from "provider_batches" as "p" where "p"."batch_id" = "l"."batch_id" and "p"."state" <> 'fallback'))
          order by "b"."created_at", "l"."batch_id", "l"."line" limit ${limit} ${lockSkip}`.execute(transaction);
        const claimed: ClaimedLine[] = [];
        for (const { batch_id: batchId, line } of picked.rows) {
          const row = await transaction.updateTable('batch_lines')
            .set({ state: 'running', lease_owner: owner, lease_until: leaseUntil, attempts: sql<number>`"attempts" + 1` })
            .where('batch_id', '=', batchId).where('line', '=', toNumber(line))
            .where((where) => where.or([where('state', '=', 'pending'), where.and([where('state', '=', 'running'), where('lease_until', '<=', now)])]))
            .returning(['line', 'custom_id', 'body', 'attempts'])
            .executeTakeFirst();
          if (row === undefined) continue;
          const batch = await transaction.selectFrom('batches').select(['account_id', 'key_id', 'endpoint']).where('id', '=', batchId).executeTakeFirstOrThrow();
          claimed.push({
            batchId, line: toNumber(row.line), customId: row.custom_id, body: row.body, attempts: toNumber(row.attempts),
            accountId: batch.account_id, keyId: batch.key_id, endpoint: toOneOf(batch.endpoint, BATCH_ENDPOINTS, 'batch endpoint'),
          });
        }
        return claimed;
      });
    },

    async renewLeases(owner, leaseUntil) {
      await db.updateTable('batch_lines').set({ lease_until: leaseUntil }).where('lease_owner', '=', owner).where('state', '=', 'running').execute();
    },

    async requestLogged(requestId) {
      // The usage row and the charge are written by separate batched writers: either one shows the request ran.
      const logged = await db.selectFrom('usage_logs').select('request_id').where('request_id', '=', requestId).executeTakeFirst();
      if (logged !== undefined) return true;
      const charged = await db.selectFrom('ledger_entries').select('id').where('request_id', '=', requestId).executeTakeFirst();
      if (charged !== undefined) return true;
      const planCharged = await db.selectFrom('subscription_usage').select('id').where('request_id', '=', requestId).executeTakeFirst();
      return planCharged !== undefined;
    },

    async completeLine(batchId, line, owner, outcome, now) {
      return db.transaction().execute(async (transaction) => {
        const changed = await transaction.updateTable('batch_lines')
          .set({ state: outcome.state, status_code: outcome.statusCode, request_id: outcome.requestId, result: outcome.result, cost_nano: outcome.costNano, lease_owner: null, lease_until: null, finished_at: now })
          .where('batch_id', '=', batchId).where('line', '=', line).where('state', '=', 'running').where('lease_owner', '=', owner)
          .executeTakeFirst();
        if (Number(changed.numUpdatedRows) === 0) return false;
        const done = outcome.state === 'done' ? 1 : 0;
        const add = (column: string, amount: number | bigint) => sql<number>`${sql.ref(column)} + ${amount}`;
        await transaction.updateTable('batches').set({
          completed: add('completed', done),
          failed: add('failed', 1 - done),
          cost_nano: sql<bigint>`"cost_nano" + ${outcome.costNano}`,
          input_tokens: add('input_tokens', outcome.tokens.input),
          cached_tokens: add('cached_tokens', outcome.tokens.cached),
          output_tokens: add('output_tokens', outcome.tokens.output),
          reasoning_tokens: add('reasoning_tokens', outcome.tokens.reasoning),
        }).where('id', '=', batchId).execute();
        return true;
      });
    },

    async claimFinalize(owner, now, leaseUntil) {
      return db.transaction().execute(async (transaction) => {
        // Lines of a batch past its window that never started will not run.
        const lapsed = await transaction.selectFrom('batches').select('id').where('status', '=', 'in_progress').where('expires_at', '<=', now).execute();
        for (const { id } of lapsed) {
          await transaction.updateTable('batch_lines').set({ state: 'expired' }).where('batch_id', '=', id).where('state', '=', 'pending').execute();
        }
        const candidate = await transaction.selectFrom('batches').selectAll()
          .where('status', 'in', ['in_progress', 'cancelling', 'finalizing'])
          .where((where) => where.or([where('finalize_until', 'is', null), where('finalize_until', '<=', now)]))
          // A running line still counts while its lease holds, and, in a batch still running inside its window, after
          // too: the queue takes it up again (only a cancelled or lapsed batch gives up a line whose instance stopped).
          .where((where) => where.not(where.exists(where.selectFrom('batch_lines').select('line').whereRef('batch_lines.batch_id', '=', 'batches.id')
            .where((inner) => inner.or([
              inner('state', '=', 'pending'),
              inner.and([inner('state', '=', 'running'), inner.or([
                inner('lease_until', '>', now),
                inner.and([inner('batches.status', '=', 'in_progress'), inner('batches.expires_at', '>', now)]),
              ])]),
            ])))))
          .orderBy('created_at').limit(1).executeTakeFirst();
        if (candidate === undefined) return null;
        // A cancelled batch reads `cancelling` until its files are written, any other `finalizing`.
        const status = candidate.status === 'cancelling' ? 'cancelling' : 'finalizing';
        const claimed = await transaction.updateTable('batches')
          .set({ status, finalizing_at: toNullableNumber(candidate.finalizing_at) ?? (status === 'finalizing' ? now : null), finalize_owner: owner, finalize_until: leaseUntil })
          .where('id', '=', candidate.id).where('status', '=', candidate.status)
          .where((where) => where.or([where('finalize_until', 'is', null), where('finalize_until', '<=', now)]))
          .executeTakeFirst();
        if (Number(claimed.numUpdatedRows) === 0) return null;
        // A running line whose lease ran out while its batch ends is given up (its instance stopped).
        const interrupted = await transaction.updateTable('batch_lines').set({ state: 'failed', status_code: 500, result: JSON.stringify({ error: { message: 'The line was interrupted and not retried because its batch ended.', type: 'server_error', code: 'batch_line_interrupted' } }) })
          .where('batch_id', '=', candidate.id).where('state', '=', 'running').executeTakeFirst();
        const given = Number(interrupted.numUpdatedRows);
        if (given > 0) await transaction.updateTable('batches').set({ failed: sql<number>`"failed" + ${given}` }).where('id', '=', candidate.id).execute();
        const row = await transaction.selectFrom('batches').selectAll().where('id', '=', candidate.id).executeTakeFirstOrThrow();
        return toRecord(row);
      });
    },

    async finishedLines(batchId, page) {
      let query = db.selectFrom('batch_lines').select(['line', 'custom_id', 'state', 'status_code', 'request_id', 'result'])
        .where('batch_id', '=', batchId).orderBy('line');
      if (page !== undefined) query = query.where('line', '>', page.afterLine).limit(page.limit);
      const rows = await query.execute();
      return rows.map((row): FinishedLine => ({
        line: toNumber(row.line),
        customId: row.custom_id,
        state: toOneOf(row.state, ['done', 'failed', 'cancelled', 'expired'] as const, 'finished batch line state'),
        statusCode: toNullableNumber(row.status_code),
        requestId: row.request_id,
        result: row.result,
      }));
    },

    async finish(batchId, owner, end) {
      const at = { completed: 'completed_at', cancelled: 'cancelled_at', expired: 'expired_at', failed: 'failed_at' } as const;
      const changed = await db.updateTable('batches')
        .set({ status: end.status, [at[end.status]]: end.at, output_file_id: end.outputFileId, error_file_id: end.errorFileId, finalize_owner: null, finalize_until: null })
        .where('id', '=', batchId).where('finalize_owner', '=', owner).executeTakeFirst();
      return Number(changed.numUpdatedRows) > 0;
    },

    async queueFigures(now) {
      const count = sql<number | bigint | string>`count(*)`.as('count');
      const lines = await db.selectFrom('batch_lines').innerJoin('batches', 'batches.id', 'batch_lines.batch_id')
        .select(['batch_lines.state', count]).where('batches.status', '=', 'in_progress').where('batch_lines.state', 'in', ['pending', 'running'])
        .groupBy('batch_lines.state').execute();
      const batches = await db.selectFrom('batches').select(count).where('status', '=', 'in_progress').executeTakeFirstOrThrow();
      const finishedSince = async (since: number): Promise<number> =>
        toNumber((await db.selectFrom('batch_lines').select(count).where('finished_at', '>', since).executeTakeFirstOrThrow()).count);
      const of = (state: string): number => toNumber(lines.find((row) => row.state === state)?.count ?? 0);
      return {
        pendingLines: of('pending'),
        runningLines: of('running'),
        inProgressBatches: toNumber(batches.count),
        finishedLastMinute: await finishedSince(now - 60_000),
        finishedLastHour: await finishedSince(now - 3_600_000),
      };
    },
  };
}
