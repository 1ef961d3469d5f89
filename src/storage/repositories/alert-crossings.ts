import { sql } from 'kysely';
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import { toBigInt, toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { Database } from '../database-schema.js';
import type { ProjectTables } from '../project-schema.js';
import type { CustomerTables } from '../customer-schema.js';
import type { BudgetPeriod } from '../../domain/records.js';
import { budgetPeriodAt } from '../../domain/budget-period.js';
import { customerSubjectId } from '../../domain/customer-records.js';
import type { AlertCrossing, AlertKind } from './alert-repository.js';

// Finding what crossed an alert threshold, and re-arming alerts whose condition no longer holds.

/** The tables alerts read: the core ones, projects and end customers. */
export type AlertDatabase = Database & ProjectTables & CustomerTables;

/** Every alert kind, in the order they are re-armed. */
export const ALERT_KINDS: readonly AlertKind[] = ['balance', 'key_quota', 'subscription_quota', 'key_paused', 'key_budget_paused', 'project_budget', 'customer_budget'];

const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month'];

/**
 * ceil(quota × percent / 100) without overflowing 64 bits for any quota up to a billion USD:
 * quota = 100a + b → a·percent + ceil(b·percent / 100). Same formula as `quotaThresholdNano` in src/alerts/.
 */
function percentOf(quota: Expression<unknown>, percent: Expression<unknown>) {
  return sql<bigint>`((${quota} / 100) * ${percent} + ((${quota} % 100) * ${percent} + 99) / 100)`;
}

const funds = sql<bigint>`(${sql.ref('accounts.balance_nano')} + ${sql.ref('accounts.credit_line_nano')})`;

// A key's own threshold when its owner set one, else the account's.
const keyPercent = sql<number | bigint | null>`coalesce(${sql.ref('api_keys.alert_quota_percent')}, ${sql.ref('accounts.alert_quota_percent')})`;
const keyPercentSet = sql<SqlBool>`${keyPercent} is not null`;
const keyThreshold = percentOf(sql.ref('api_keys.quota_nano'), keyPercent);
const planThreshold = percentOf(sql.ref('plans.quota_nano'), sql.ref('accounts.alert_quota_percent'));
const fundsBelowThreshold = sql<SqlBool>`${funds} < ${sql.ref('accounts.alert_balance_nano')}`;
const keySpentPastThreshold = sql<SqlBool>`${sql.ref('api_keys.spent_nano')} >= ${keyThreshold}`;
const subscriptionUsePastThreshold = sql<SqlBool>`${sql.ref('subscriptions.used_nano')} >= ${planThreshold}`;
const keyQuotaUsedUp = sql<SqlBool>`${sql.ref('api_keys.spent_nano')} >= ${sql.ref('api_keys.quota_nano')}`;
const keyBudgetUsedUp = sql<SqlBool>`${sql.ref('api_keys.budget_spent_nano')} >= ${sql.ref('api_keys.budget_limit_nano')}`;
const projectThreshold = percentOf(sql.ref('projects.budget_limit_nano'), sql.ref('accounts.alert_quota_percent'));
const projectSpentPastThreshold = sql<SqlBool>`${sql.ref('projects.budget_spent_nano')} >= ${projectThreshold}`;
// An end customer's budget is its own rule's when it has one (a rule replaces the default as a whole), else the
// rule of every customer's (customer '').
const customerHasOwnRule = sql<SqlBool>`${sql.ref('own.customer')} is not null`;
const customerLimit = sql<bigint | null>`case when ${customerHasOwnRule} then ${sql.ref('own.budget_limit_nano')} else ${sql.ref('every.budget_limit_nano')} end`;
const customerPeriod = sql<string | null>`case when ${customerHasOwnRule} then ${sql.ref('own.budget_period')} else ${sql.ref('every.budget_period')} end`;
const customerThreshold = percentOf(customerLimit, sql.ref('accounts.alert_quota_percent'));
const customerSpentPastThreshold = sql<SqlBool>`${sql.ref('customer_spend.spent_nano')} >= ${customerThreshold}`;
const customerSubject = sql<string>`${sql.ref('customer_spend.account_id')} || ':' || ${sql.ref('customer_spend.customer')}`;

/** Notified alerts whose condition no longer holds are armed again; returns how many. */
export async function rearmAlerts(db: Kysely<AlertDatabase>, now: number): Promise<number> {
  let total = 0n;
  for (const kind of ALERT_KINDS) {
    const result = await db.updateTable('alert_states')
      .set({ state: 'armed', updated_at: now })
      .where('kind', '=', kind)
      .where('state', '=', 'notified')
      .where((where) => conditionGone(where, kind, now))
      .executeTakeFirst();
    total += result.numUpdatedRows;
  }
  return Number(total);
}

/** The alert's subject no longer meets the kind's condition. */
function conditionGone(where: ExpressionBuilder<AlertDatabase, 'alert_states'>, kind: AlertKind, now: number): Expression<SqlBool> {
  switch (kind) {
    case 'balance':
      return where.not(where.exists(where.selectFrom('accounts').select(sql.lit(1).as('one'))
        .whereRef('accounts.id', '=', 'alert_states.subject_id')
        .where('accounts.alert_balance_nano', 'is not', null)
        .where(fundsBelowThreshold)));
    case 'key_quota':
      return where.not(where.exists(where.selectFrom('api_keys').innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
        .select(sql.lit(1).as('one'))
        .whereRef('api_keys.id', '=', 'alert_states.subject_id')
        .where(keyPercentSet)
        .where('api_keys.quota_nano', '>', 0n)
        .where(keySpentPastThreshold)));
    case 'key_paused':
      return where.not(where.exists(where.selectFrom('api_keys').select(sql.lit(1).as('one'))
        .whereRef('api_keys.id', '=', 'alert_states.subject_id')
        .where('api_keys.status', '<>', 'revoked')
        .where('api_keys.quota_nano', '>', 0n)
        .where(keyQuotaUsedUp)));
    case 'key_budget_paused':
      // Re-armed when the limit is raised or removed; a new period's pause is claimed over a notified
      // alert of an earlier period, and one period's pauses share one event.
      return where.not(where.exists(where.selectFrom('api_keys').select(sql.lit(1).as('one'))
        .whereRef('api_keys.id', '=', 'alert_states.subject_id')
        .whereRef('api_keys.budget_period_start', '=', 'alert_states.period_start')
        .where('api_keys.status', '<>', 'revoked')
        .where('api_keys.budget_limit_nano', 'is not', null)
        .where(keyBudgetUsedUp)));
    case 'project_budget':
      // Re-armed when the limit is raised or removed or alerts are turned off; a new period's crossing is claimed
      // over a notified alert of an earlier period.
      return where.not(where.exists(where.selectFrom('projects').innerJoin('accounts', 'accounts.id', 'projects.account_id')
        .select(sql.lit(1).as('one'))
        .whereRef('projects.id', '=', 'alert_states.subject_id')
        .whereRef('projects.budget_period_start', '=', 'alert_states.period_start')
        .where('accounts.alert_quota_percent', 'is not', null)
        .where('projects.budget_limit_nano', '>', 0n)
        .where(projectSpentPastThreshold)));
    case 'customer_budget':
      return where.not(where.exists(where.selectFrom('customer_spend')
        .innerJoin('accounts', 'accounts.id', 'customer_spend.account_id')
        .leftJoin('customer_rules as own', (join) => join.onRef('own.account_id', '=', 'customer_spend.account_id').onRef('own.customer', '=', 'customer_spend.customer'))
        .leftJoin('customer_rules as every', (join) => join.onRef('every.account_id', '=', 'customer_spend.account_id').on('every.customer', '=', ''))
        .select(sql.lit(1).as('one'))
        .where('accounts.alert_quota_percent', 'is not', null)
        .where(customerLimit, '>', 0n)
        .where(customerSpentPastThreshold)
        .where(sql<SqlBool>`${customerSubject} = ${sql.ref('alert_states.subject_id')}`)
        .whereRef('customer_spend.period_start', '=', 'alert_states.period_start')));
    case 'subscription_quota':
      return where.not(where.exists(where.selectFrom('subscriptions')
        .innerJoin('plans', 'plans.id', 'subscriptions.plan_id')
        .innerJoin('accounts', 'accounts.id', 'subscriptions.account_id')
        .select(sql.lit(1).as('one'))
        .whereRef('subscriptions.id', '=', 'alert_states.subject_id')
        .whereRef('subscriptions.current_period_start', '=', 'alert_states.period_start')
        .where('subscriptions.status', '=', 'active')
        .where('subscriptions.current_period_end', '>', now)
        .where('accounts.alert_quota_percent', 'is not', null)
        .where('plans.quota_nano', '>', 0n)
        .where(subscriptionUsePastThreshold)));
    default: {
      const unknown: never = kind;
      throw new TypeError(`unknown alert kind ${String(unknown)}`);
    }
  }
}

/** Subjects past a threshold whose alert is armed (or was told of an earlier period), at most `limit` of each kind. */
export async function findCrossings(db: Kysely<AlertDatabase>, now: number, limit: number): Promise<AlertCrossing[]> {
  return [
    ...await balanceCrossings(db, limit),
    ...await keyQuotaCrossings(db, limit),
    ...await keyPausedCrossings(db, limit),
    ...await keyBudgetPausedCrossings(db, now, limit),
    ...await subscriptionCrossings(db, now, limit),
    ...await projectBudgetCrossings(db, now, limit),
    ...await customerBudgetCrossings(db, now, limit),
  ];
}

/** A crossing of this kind not claimed yet: no alert, an armed one, or one told of an earlier period. */
function unclaimed(where: ExpressionBuilder<AlertDatabase, 'alert_states'>, periodStart: Expression<unknown>): Expression<SqlBool> {
  return where.or([
    where('alert_states.state', 'is', null),
    where('alert_states.state', '=', 'armed'),
    where.and([where('alert_states.state', '=', 'notified'), sql<SqlBool>`${sql.ref('alert_states.period_start')} < ${periodStart}`]),
  ]);
}

/** Only spend of the current period counts (spend is stored with the period it belongs to). */
function inCurrentPeriod(period: string | null, periodStart: unknown, now: number): boolean {
  if (period === null || !BUDGET_PERIODS.includes(period as BudgetPeriod)) return false;
  return toNumber(periodStart as number) === budgetPeriodAt(period as BudgetPeriod, now).start;
}

async function projectBudgetCrossings(db: Kysely<AlertDatabase>, now: number, limit: number): Promise<AlertCrossing[]> {
  const rows = await db.selectFrom('projects')
    .innerJoin('accounts', 'accounts.id', 'projects.account_id')
    .leftJoin('alert_states', (join) => join.on('alert_states.kind', '=', 'project_budget').onRef('alert_states.subject_id', '=', 'projects.id'))
    .select([
      'projects.id as subject_id', 'projects.account_id', 'projects.budget_spent_nano as value', 'projects.budget_limit_nano as quota',
      'projects.budget_period as period', 'projects.budget_period_start as period_start', 'accounts.alert_quota_percent as percent',
    ])
    .select(projectThreshold.as('threshold'))
    .where('accounts.alert_quota_percent', 'is not', null)
    .where('projects.budget_period', 'is not', null)
    .where('projects.budget_limit_nano', '>', 0n)
    .where(projectSpentPastThreshold)
    .where((where) => unclaimed(where, sql.ref('projects.budget_period_start')))
    .limit(limit)
    .execute();
  return rows.filter((row) => inCurrentPeriod(row.period, row.period_start, now)).map((row) => ({
    kind: 'project_budget', subjectId: row.subject_id, accountId: row.account_id, periodStart: toNumber(row.period_start),
    valueNano: toBigInt(row.value), thresholdNano: toBigInt(row.threshold), limitNano: toBigInt(row.quota ?? 0n), percent: toNullableNumber(row.percent),
  }));
}

async function customerBudgetCrossings(db: Kysely<AlertDatabase>, now: number, limit: number): Promise<AlertCrossing[]> {
  const rows = await db.selectFrom('customer_spend')
    .innerJoin('accounts', 'accounts.id', 'customer_spend.account_id')
    .leftJoin('customer_rules as own', (join) => join.onRef('own.account_id', '=', 'customer_spend.account_id').onRef('own.customer', '=', 'customer_spend.customer'))
    .leftJoin('customer_rules as every', (join) => join.onRef('every.account_id', '=', 'customer_spend.account_id').on('every.customer', '=', ''))
    .leftJoin('alert_states', (join) => join.on('alert_states.kind', '=', 'customer_budget').on(sql<SqlBool>`${sql.ref('alert_states.subject_id')} = ${customerSubject}`))
    .select(['customer_spend.account_id', 'customer_spend.customer', 'customer_spend.spent_nano as value', 'customer_spend.period_start', 'accounts.alert_quota_percent as percent'])
    .select([customerLimit.as('quota'), customerPeriod.as('period'), customerThreshold.as('threshold')])
    .where('accounts.alert_quota_percent', 'is not', null)
    .where(customerLimit, '>', 0n)
    .where(customerSpentPastThreshold)
    .where((where) => unclaimed(where, sql.ref('customer_spend.period_start')))
    .limit(limit)
    .execute();
  return rows.filter((row) => inCurrentPeriod(row.period, row.period_start, now)).map((row) => ({
    kind: 'customer_budget', subjectId: customerSubjectId(row.account_id, row.customer), accountId: row.account_id, periodStart: toNumber(row.period_start),
    valueNano: toBigInt(row.value), thresholdNano: toBigInt(row.threshold), limitNano: toBigInt(row.quota ?? 0n), percent: toNullableNumber(row.percent),
  }));
}

async function balanceCrossings(db: Kysely<AlertDatabase>, limit: number): Promise<AlertCrossing[]> {
  const balances = await db.selectFrom('accounts')
    .leftJoin('alert_states', (join) => join.on('alert_states.kind', '=', 'balance').onRef('alert_states.subject_id', '=', 'accounts.id'))
    .select(['accounts.id as subject_id', 'accounts.alert_balance_nano as threshold'])
    .select(funds.as('value'))
    .where('accounts.alert_balance_nano', 'is not', null)
    .where(fundsBelowThreshold)
    .where((where) => where.or([where('alert_states.state', 'is', null), where('alert_states.state', '=', 'armed')]))
    .limit(limit)
    .execute();
  return balances.map((row) => ({
    kind: 'balance', subjectId: row.subject_id, accountId: row.subject_id, periodStart: 0,
    valueNano: toBigInt(row.value), thresholdNano: toBigInt(row.threshold), limitNano: null, percent: null,
  }));
}

async function keyQuotaCrossings(db: Kysely<AlertDatabase>, limit: number): Promise<AlertCrossing[]> {
  const keys = await db.selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .leftJoin('alert_states', (join) => join.on('alert_states.kind', '=', 'key_quota').onRef('alert_states.subject_id', '=', 'api_keys.id'))
    .select(['api_keys.id as subject_id', 'api_keys.account_id', 'api_keys.spent_nano as value', 'api_keys.quota_nano as quota'])
    .select([keyPercent.as('percent'), keyThreshold.as('threshold')])
    .where(keyPercentSet)
    .where('api_keys.status', '<>', 'revoked')
    .where('api_keys.quota_nano', '>', 0n)
    .where(keySpentPastThreshold)
    .where((where) => where.or([where('alert_states.state', 'is', null), where('alert_states.state', '=', 'armed')]))
    .limit(limit)
    .execute();
  return keys.map((row) => ({
    kind: 'key_quota', subjectId: row.subject_id, accountId: row.account_id, periodStart: 0,
    valueNano: toBigInt(row.value), thresholdNano: toBigInt(row.threshold), limitNano: toBigInt(row.quota), percent: toNullableNumber(row.percent),
  }));
}

async function keyPausedCrossings(db: Kysely<AlertDatabase>, limit: number): Promise<AlertCrossing[]> {
  const paused = await db.selectFrom('api_keys')
    .leftJoin('alert_states', (join) => join.on('alert_states.kind', '=', 'key_paused').onRef('alert_states.subject_id', '=', 'api_keys.id'))
    .select(['api_keys.id as subject_id', 'api_keys.account_id', 'api_keys.spent_nano as value', 'api_keys.quota_nano as quota'])
    .where('api_keys.status', '<>', 'revoked')
    .where('api_keys.quota_nano', '>', 0n)
    .where(keyQuotaUsedUp)
    .where((where) => where.or([where('alert_states.state', 'is', null), where('alert_states.state', '=', 'armed')]))
    .limit(limit)
    .execute();
  return paused.map((row) => ({
    kind: 'key_paused', subjectId: row.subject_id, accountId: row.account_id, periodStart: 0,
    valueNano: toBigInt(row.value), thresholdNano: toBigInt(row.quota), limitNano: toBigInt(row.quota), percent: 100,
  }));
}

async function keyBudgetPausedCrossings(db: Kysely<AlertDatabase>, now: number, limit: number): Promise<AlertCrossing[]> {
  // Budget spend is stored with the period it belongs to; only a used-up budget of the current period pauses.
  const budgetPaused = (await db.selectFrom('api_keys')
    .leftJoin('alert_states', (join) => join.on('alert_states.kind', '=', 'key_budget_paused').onRef('alert_states.subject_id', '=', 'api_keys.id'))
    .select([
      'api_keys.id as subject_id', 'api_keys.account_id', 'api_keys.budget_spent_nano as value', 'api_keys.budget_limit_nano as quota',
      'api_keys.budget_period as period', 'api_keys.budget_period_start as period_start',
    ])
    .where('api_keys.status', '<>', 'revoked')
    .where('api_keys.budget_limit_nano', 'is not', null)
    .where('api_keys.budget_period', 'is not', null)
    .where(keyBudgetUsedUp)
    .where((where): Expression<SqlBool> => where.or([
      where('alert_states.state', 'is', null),
      where('alert_states.state', '=', 'armed'),
      where.and([where('alert_states.state', '=', 'notified'), sql<SqlBool>`${sql.ref('alert_states.period_start')} < ${sql.ref('api_keys.budget_period_start')}`]),
    ]))
    .limit(limit)
    .execute())
    .filter((row) => toNumber(row.period_start) === budgetPeriodAt(toOneOf(row.period ?? '', BUDGET_PERIODS, 'budget period'), now).start);
  return budgetPaused.map((row) => ({
    kind: 'key_budget_paused', subjectId: row.subject_id, accountId: row.account_id, periodStart: toNumber(row.period_start),
    valueNano: toBigInt(row.value), thresholdNano: toBigInt(row.quota), limitNano: toBigInt(row.quota), percent: 100,
  }));
}

async function subscriptionCrossings(db: Kysely<AlertDatabase>, now: number, limit: number): Promise<AlertCrossing[]> {
  const subscriptions = await db.selectFrom('subscriptions')
    .innerJoin('plans', 'plans.id', 'subscriptions.plan_id')
    .innerJoin('accounts', 'accounts.id', 'subscriptions.account_id')
    .leftJoin('alert_states', (join) => join.on('alert_states.kind', '=', 'subscription_quota').onRef('alert_states.subject_id', '=', 'subscriptions.id'))
    .select([
      'subscriptions.id as subject_id', 'subscriptions.account_id', 'subscriptions.used_nano as value', 'subscriptions.current_period_start as period_start',
      'plans.quota_nano as quota', 'accounts.alert_quota_percent as percent',
    ])
    .select(planThreshold.as('threshold'))
    .where('accounts.alert_quota_percent', 'is not', null)
    .where('subscriptions.status', '=', 'active')
    .where('subscriptions.current_period_start', '<=', now)
    .where('subscriptions.current_period_end', '>', now)
    .where('plans.quota_nano', '>', 0n)
    .where(subscriptionUsePastThreshold)
    .where((where): Expression<SqlBool> => where.or([
      where('alert_states.state', 'is', null),
      where('alert_states.state', '=', 'armed'),
      where.and([where('alert_states.state', '=', 'notified'), sql<SqlBool>`${sql.ref('alert_states.period_start')} < ${sql.ref('subscriptions.current_period_start')}`]),
    ]))
    .limit(limit)
    .execute();
  return subscriptions.map((row) => ({
    kind: 'subscription_quota', subjectId: row.subject_id, accountId: row.account_id, periodStart: toNumber(row.period_start),
    valueNano: toBigInt(row.value), thresholdNano: toBigInt(row.threshold), limitNano: toBigInt(row.quota), percent: toNullableNumber(row.percent),
  }));
}
