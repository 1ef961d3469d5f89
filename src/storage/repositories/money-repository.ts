import { CompiledQuery, type Kysely } from 'kysely';
import { HOLDER_PREFIX } from '../../domain/batches.js';
import { toBigInt, toNumber } from '../convert.js';
import type { Database } from '../database-schema.js';
import type { SqliteBatches } from '../dialects.js';
import { chunk, rowsPerStatement } from '../pagination.js';
import { textArray } from '../postgres-arrays.js';
import type { MoneyRepository, MoneyTransaction } from '../storage.js';
import { postgresMoneyStatements, sqliteMoneyStatements, type AccountFundsRow } from './money-statements.js';
import { transactionView } from './money-transaction.js';
import { auditLedger, creditTotals } from './ledger-audit.js';
import { signalWork } from '../../shared/work-signals.js';

type Dialect = 'sqlite' | 'postgres';

/** Holders' ids (batches' holds) sort from this prefix up to (not including) the next string after every one of them. */
const HOLDER_PREFIX_END = `${HOLDER_PREFIX.slice(0, -1)}${String.fromCharCode(HOLDER_PREFIX.charCodeAt(HOLDER_PREFIX.length - 1) + 1)}`;

/**
 * PostgreSQL locks a money transaction's accounts up front, in byte order ("C" collation, which matches JavaScript's
 * default sort of the ASCII ids), so concurrent batches of any instances take them in one order and cannot deadlock.
 * The same statement reads their funds: no other transaction can change them while they are locked, so the
 * transaction's read of the accounts needs no round trip of its own.
 */
const LOCK_ACCOUNTS_IN_ID_ORDER = 'select "id", "balance_nano", "credit_line_nano" from "accounts" where "id" = any($1::text[]) order by "id" collate "C" for no key update';

/** The instances' heartbeat rows: registration (dropping a crashed predecessor's holds), heartbeats, a clean stop and the stale. */
function instanceRegistry(db: Kysely<Database>): Pick<MoneyRepository, 'registerInstance' | 'heartbeat' | 'releaseInstance' | 'staleInstances'> {
  return {
    async registerInstance(instanceId, now) {
      return db.transaction().execute(async (trx) => {
        const dropped = await trx.deleteFrom('money_holds').where('instance_id', '=', instanceId).executeTakeFirst();
        await trx
          .insertInto('gateway_instances')
          .values({ instance_id: instanceId, started_at: now, heartbeat_at: now })
          .onConflict((conflict) => conflict.column('instance_id').doUpdateSet({ started_at: now, heartbeat_at: now }))
          .execute();
        return Number(dropped.numDeletedRows);
      });
    },

    async heartbeat(instanceId, now) {
      await db
        .insertInto('gateway_instances')
        .values({ instance_id: instanceId, started_at: now, heartbeat_at: now })
        .onConflict((conflict) => conflict.column('instance_id').doUpdateSet({ heartbeat_at: now }))
        .execute();
    },

    async releaseInstance(instanceId) {
      await db.transaction().execute(async (trx) => {
        await trx.deleteFrom('money_holds').where('instance_id', '=', instanceId).execute();
        await trx.deleteFrom('gateway_instances').where('instance_id', '=', instanceId).execute();
      });
    },

    async staleInstances(before) {
      // Holds or checkpoints whose instance has no heartbeat row at all (it stopped, or never registered) are stale too;
      // a holder's (a batch's) holds belong to no instance and are not. One statement: every heartbeat runs it.
      const registered = db.selectFrom('gateway_instances').select('instance_id');
      const rows = await db.selectFrom('gateway_instances').select('instance_id').where('heartbeat_at', '<', before)
        .union(db.selectFrom('money_holds').select('instance_id').where('instance_id', 'not in', registered)
          .where((where) => where.or([where('instance_id', '<', HOLDER_PREFIX), where('instance_id', '>=', HOLDER_PREFIX_END)])))
        .union(db.selectFrom('stream_checkpoints').select('instance_id').where('instance_id', 'not in', registered))
        .execute();
      return [...new Set(rows.map((row) => row.instance_id))];
    },
  };
}

/**
 * `sqlite` (SQLite only): the connection, and the observer told how long each money transaction and checkpoint write
 * took. Every statement runs synchronously there, so that is how long it held the event loop.
 */
export function createMoneyRepository(db: Kysely<Database>, dialect: Dialect, sqlite: SqliteBatches | null): MoneyRepository {
  const observe = sqlite?.observe ?? null;
  // SQLite has one connection: its statements run on it directly, inside the transaction Kysely opened there.
  const sqliteStatements = sqlite === null ? null : sqliteMoneyStatements(sqlite.database);
  return {
    async transact(accountIds, work) {
      const startedAt = performance.now();
      let rows = 0;
      const counted = (view: MoneyTransaction): MoneyTransaction => (observe === null ? view : {
        ...view,
        write(instanceId, writes) {
          rows += writes.usages.length + writes.holds.length;
          return view.write(instanceId, writes);
        },
      });
      const result = await db.transaction().execute(async (trx) => {
        let locked: AccountFundsRow[] = [];
        if (dialect === 'postgres' && accountIds.length > 0) {
          locked = (await trx.executeQuery<AccountFundsRow>(CompiledQuery.raw(LOCK_ACCOUNTS_IN_ID_ORDER, [textArray([...new Set(accountIds)].sort())]))).rows;
        }
        return work(counted(transactionView(trx, dialect, sqliteStatements ?? postgresMoneyStatements(trx, locked))));
      });
      observe?.('money', (performance.now() - startedAt) / 1000, rows);
      signalWork('money');
      return result;
    },

    ...instanceRegistry(db),

    async checkpointAccounts(instanceId) {
      const rows = await db.selectFrom('stream_checkpoints').select('account_id').distinct().where('instance_id', '=', instanceId).execute();
      return rows.map((row) => row.account_id);
    },

    async writeCheckpoints(instanceId, checkpoints, now) {
      if (checkpoints.length === 0) return;
      const rows = checkpoints.map((checkpoint) => ({
        request_id: checkpoint.requestId,
        instance_id: instanceId,
        account_id: checkpoint.accountId,
        cost_nano: checkpoint.costNano,
        reservation: checkpoint.reservation,
        usage_row: checkpoint.usageRow,
        updated_at: now,
      }));
      const startedAt = performance.now();
      await db.transaction().execute(async (trx) => {
        for (const part of chunk(rows, rowsPerStatement(7))) {
          await trx
            .insertInto('stream_checkpoints')
            .values(part)
            .onConflict((conflict) => conflict.column('request_id').doUpdateSet({
              cost_nano: (expression) => expression.ref('excluded.cost_nano'),
              usage_row: (expression) => expression.ref('excluded.usage_row'),
              updated_at: (expression) => expression.ref('excluded.updated_at'),
            }))
            .execute();
        }
      });
      observe?.('checkpoints', (performance.now() - startedAt) / 1000, rows.length);
    },

    async listHolds(accountId) {
      let query = db.selectFrom('money_holds').selectAll().orderBy('instance_id').orderBy('pool');
      if (accountId !== undefined) query = query.where('account_id', '=', accountId);
      const rows = await query.execute();
      return rows.map((row) => ({ instanceId: row.instance_id, pool: row.pool, accountId: row.account_id, heldNano: toBigInt(row.held_nano) }));
    },

    async listHolders() {
      const rows = await db.selectFrom('money_holds').select(['instance_id', 'account_id', (eb) => eb.fn.max('updated_at').as('updated_at')])
        .where('instance_id', '>=', HOLDER_PREFIX).where('instance_id', '<', HOLDER_PREFIX_END)
        .groupBy(['instance_id', 'account_id']).execute();
      return rows.map((row) => ({ holder: row.instance_id, accountId: row.account_id, updatedAt: toNumber(row.updated_at) }));
    },

    audit: (accountId) => auditLedger(db, accountId),
    creditTotals: (accountId) => creditTotals(db, accountId),
  };
}
