import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database } from '../database-schema.js';
import type { IntegerColumn, NullableIntegerColumn } from '../schema-columns.js';
import { pageLimit, toPage } from '../pagination.js';
import type { Page, PageRequest } from '../../domain/records.js';

/** What an operator may do over the whole deployment (src/console/operator/operator-roles.ts decides). */
export type OperatorRole = 'owner' | 'admin' | 'support' | 'viewer';
export const OPERATOR_ROLES: readonly OperatorRole[] = ['owner', 'admin', 'support', 'viewer'];

/** A role as granted: who, which role, when and by whom. */
export interface OperatorGrant {
  userId: string;
  role: OperatorRole;
  createdAt: number;
  /** The operator who granted the role; null when made from the CLI or with the admin token. */
  createdBy: string | null;
}

export interface ConsoleOperator extends OperatorGrant {
  /** When an owner disabled the operator (no operator route answers them); null while active. */
  disabledAt: number | null;
  disabledBy: string | null;
}

export interface AuditEntry {
  id: string;
  at: number;
  operatorId: string;
  operatorEmail: string;
  /** `METHOD /admin/path` or a named console action. */
  action: string;
  target: string;
  status: number;
  /** JSON with secrets removed, or null. */
  before: string | null;
  after: string | null;
  ip: string;
}

export interface AuditQuery {
  operatorId?: string;
  /** Substring of the action or target. */
  search?: string;
  from?: number;
  to?: number;
}

type ConsoleOperatorsTable = {
  user_id: string;
  role: string;
  created_at: IntegerColumn;
  created_by: string | null;
  disabled_at: NullableIntegerColumn;
  disabled_by: string | null;
}

type OperatorAuditLogTable = {
  id: string;
  at: IntegerColumn;
  operator_id: string;
  operator_email: string;
  action: string;
  target: string;
  status: IntegerColumn;
  before_json: string | null;
  after_json: string | null;
  ip: string;
}

type ConsoleUserLocksTable = {
  user_id: string;
  reason: string;
  locked_by: string;
  locked_at: IntegerColumn;
}

export interface UserLock {
  userId: string;
  reason: string;
  lockedBy: string;
  lockedAt: number;
}

export type OperatorTables = {
  console_user_locks: ConsoleUserLocksTable;
  console_operators: ConsoleOperatorsTable;
  operator_audit_log: OperatorAuditLogTable;
}

/** One call of the usage log, the columns the operator's overview needs. */
export interface RecentCall {
  at: number;
  accountId: string | null;
  model: string | null;
  channelId: string | null;
  status: number;
  latencyMs: number;
  costNano: bigint;
}

export interface OperatorRepository {
  getLock(userId: string): Promise<UserLock | null>;
  /** Locks the user (replacing an earlier lock's reason). */
  lock(lock: UserLock): Promise<void>;
  unlock(userId: string): Promise<boolean>;
  /** The newest calls (at most `limit`) in [from, to), newest first. */
  recentCalls(from: number, to: number, limit: number): Promise<RecentCall[]>;
  /** Sum and count of the balances below zero (what accounts owe). */
  balancesOwed(): Promise<{ accounts: number; owedNano: bigint }>;
  get(userId: string): Promise<ConsoleOperator | null>;
  /** The operators among the account's members, and whether the account is the only one each belongs to. */
  operatorsAmongMembers(accountId: string): Promise<Array<{ operator: ConsoleOperator; onlyMembership: boolean }>>;
  list(): Promise<ConsoleOperator[]>;
  count(): Promise<number>;
  /** Grants or changes the role (a disabled operator stays disabled). */
  upsert(operator: OperatorGrant): Promise<void>;
  /** Disables (`disabled` given) or enables (null) the operator; false when there is no such operator. */
  setDisabled(userId: string, disabled: { at: number; by: string } | null): Promise<boolean>;
  remove(userId: string): Promise<boolean>;
  appendAudit(entry: AuditEntry): Promise<void>;
  /** Newest first; `after` is the id of the last entry of the previous page (ids sort by time). */
  listAudit(query: AuditQuery, page: PageRequest): Promise<Page<AuditEntry>>;
}

function toRole(value: string): OperatorRole {
  const role = OPERATOR_ROLES.find((known) => known === value);
  if (role === undefined) throw new Error(`unknown operator role '${value}' in console_operators`);
  return role;
}

function toOperator(row: Selectable<ConsoleOperatorsTable>): ConsoleOperator {
  return {
    userId: row.user_id, role: toRole(row.role), createdAt: Number(row.created_at), createdBy: row.created_by,
    disabledAt: row.disabled_at === null ? null : Number(row.disabled_at), disabledBy: row.disabled_by,
  };
}

function toAudit(row: Selectable<OperatorAuditLogTable>): AuditEntry {
  return {
    id: row.id, at: Number(row.at), operatorId: row.operator_id, operatorEmail: row.operator_email, action: row.action, target: row.target,
    status: Number(row.status), before: row.before_json, after: row.after_json, ip: row.ip,
  };
}

export function createOperatorRepository(db: Kysely<Database & OperatorTables>): OperatorRepository {
  return {
    async getLock(userId) {
      const row = await db.selectFrom('console_user_locks').selectAll().where('user_id', '=', userId).executeTakeFirst();
      return row === undefined ? null : { userId: row.user_id, reason: row.reason, lockedBy: row.locked_by, lockedAt: Number(row.locked_at) };
    },
    async lock(lock) {
      await db.insertInto('console_user_locks')
        .values({ user_id: lock.userId, reason: lock.reason, locked_by: lock.lockedBy, locked_at: lock.lockedAt })
        .onConflict((conflict) => conflict.column('user_id').doUpdateSet({ reason: lock.reason, locked_by: lock.lockedBy, locked_at: lock.lockedAt }))
        .execute();
    },
    async unlock(userId) {
      const result = await db.deleteFrom('console_user_locks').where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async recentCalls(from, to, limit) {
      const rows = await db.selectFrom('usage_logs')
        .select(['created_at', 'account_id', 'model', 'channel_id', 'status', 'latency_ms', 'cost_nano'])
        .where('created_at', '>=', from).where('created_at', '<', to)
        .orderBy('created_at', 'desc').limit(limit).execute();
      return rows.map((row) => ({
        at: Number(row.created_at), accountId: row.account_id, model: row.model, channelId: row.channel_id, status: Number(row.status),
        latencyMs: Number(row.latency_ms), costNano: BigInt(String(row.cost_nano)),
      }));
    },
    async balancesOwed() {
      const rows = await db.selectFrom('accounts').select('balance_nano').where('balance_nano', '<', 0n).execute();
      let owedNano = 0n;
      for (const row of rows) owedNano -= BigInt(String(row.balance_nano));
      return { accounts: rows.length, owedNano };
    },
    async get(userId) {
      const row = await db.selectFrom('console_operators').selectAll().where('user_id', '=', userId).executeTakeFirst();
      return row === undefined ? null : toOperator(row);
    },
    async operatorsAmongMembers(accountId) {
      const rows = await db.selectFrom('console_operators')
        .innerJoin('account_members', 'account_members.user_id', 'console_operators.user_id')
        .selectAll('console_operators')
        .select((eb) => eb.selectFrom('account_members as other').select(eb.fn.countAll().as('count'))
          .whereRef('other.user_id', '=', 'console_operators.user_id').where('other.account_id', '!=', accountId).as('elsewhere'))
        .where('account_members.account_id', '=', accountId)
        .orderBy('console_operators.user_id')
        .execute();
      return rows.map((row) => ({ operator: toOperator(row), onlyMembership: Number(row.elsewhere ?? 0) === 0 }));
    },
    async list() {
      const rows = await db.selectFrom('console_operators').selectAll().orderBy('created_at').execute();
      return rows.map(toOperator);
    },
    async count() {
      const row = await db.selectFrom('console_operators').select((eb) => eb.fn.countAll().as('count')).executeTakeFirst();
      return Number(row?.count ?? 0);
    },
    async upsert(operator) {
      await db.insertInto('console_operators')
        .values({ user_id: operator.userId, role: operator.role, created_at: operator.createdAt, created_by: operator.createdBy })
        .onConflict((conflict) => conflict.column('user_id').doUpdateSet({ role: operator.role }))
        .execute();
    },
    async setDisabled(userId, disabled) {
      const result = await db.updateTable('console_operators')
        .set({ disabled_at: disabled?.at ?? null, disabled_by: disabled?.by ?? null })
        .where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },
    async remove(userId) {
      const result = await db.deleteFrom('console_operators').where('user_id', '=', userId).executeTakeFirst();
      return Number(result.numDeletedRows) > 0;
    },
    async appendAudit(entry) {
      await db.insertInto('operator_audit_log').values({
        id: entry.id, at: entry.at, operator_id: entry.operatorId, operator_email: entry.operatorEmail, action: entry.action, target: entry.target,
        status: entry.status, before_json: entry.before, after_json: entry.after, ip: entry.ip,
      }).execute();
    },
    async listAudit(query, page) {
      const limit = pageLimit(page);
      let select = db.selectFrom('operator_audit_log').selectAll();
      if (query.operatorId !== undefined) select = select.where('operator_id', '=', query.operatorId);
      if (query.from !== undefined) select = select.where('at', '>=', query.from);
      if (query.to !== undefined) select = select.where('at', '<', query.to);
      if (query.search !== undefined && query.search !== '') {
        // The search text is literal: LIKE's wildcards in it are escaped (ids hold underscores).
        const pattern = `%${query.search.replace(/[%_\\]/g, (match) => `\\${match}`)}%`;
        select = select.where(sql<boolean>`(action like ${pattern} escape '\\' or target like ${pattern} escape '\\')`);
      }
      if (page.after != null) select = select.where('id', '<', page.after);
      const rows = await select.orderBy('id', 'desc').limit(limit + 1).execute();
      return toPage(rows.map(toAudit), limit, (entry) => entry.id);
    },
  };
}
