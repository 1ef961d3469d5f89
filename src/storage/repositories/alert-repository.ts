import { sql } from 'kysely';
import type { Expression, Kysely, Selectable, SqlBool, Updateable } from 'kysely';
import { toBigInt, toNullableBigInt, toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { AccountsTable, AlertStatesTable, Database } from '../database-schema.js';
import type { BudgetPeriod, NanoUsd } from '../../domain/records.js';
import { budgetPeriodAt } from '../../domain/budget-period.js';

/**
 * What an alert watches: an account's funds, a key's spend against its quota, a subscription's use of its period
 * quota; `key_paused`: a key whose quota cap is used up (paused until it is raised); `key_budget_paused`: a key whose
 * daily, weekly or monthly budget is used up (paused until the period ends or the limit is raised, once per period).
 * Both paused kinds are told to webhooks only.
 */
export type AlertKind = 'balance' | 'key_quota' | 'subscription_quota' | 'key_paused' | 'key_budget_paused';
export const ALERT_KINDS: readonly AlertKind[] = ['balance', 'key_quota', 'subscription_quota', 'key_paused', 'key_budget_paused'];

/** `armed`: will alert on the next crossing; `pending`: crossed, mail owed; `notified`: mail sent, waits to re-arm. */
export type AlertStateName = 'armed' | 'pending' | 'notified';
const STATE_NAMES: readonly AlertStateName[] = ['armed', 'pending', 'notified'];

export interface AlertSettings {
  /** Alert when the funds left (balance plus credit line) drop below this; null: off. */
  balanceNano: NanoUsd | null;
  /** Alert when a key's spend or a subscription's period use reaches this percent of its quota; null: off. */
  quotaPercent: number | null;
}

/** A subject past its threshold, as seen by the checker. */
export interface AlertCrossing {
  kind: AlertKind;
  /** The account id (balance), key id (key_quota) or subscription id (subscription_quota). */
  subjectId: string;
  accountId: string;
  /** The subscription or key budget period the crossing belongs to; 0 for balances and key quotas. */
  periodStart: number;
  /** Funds left, key spend or period use at the crossing. */
  valueNano: NanoUsd;
  /** The value at which the alert fires. */
  thresholdNano: NanoUsd;
  /** The quota (quota kinds only). */
  limitNano: NanoUsd | null;
  percent: number | null;
}

export interface AlertState extends AlertCrossing {
  state: AlertStateName;
  crossedAt: number;
  /** Delivery attempts so far. */
  attempts: number;
  /** A pending alert is (re)sent from this time on; while one instance sends, it is its lease. */
  nextAttemptAt: number;
  notifiedAt: number | null;
  lastError: string | null;
  updatedAt: number;
}

export interface AlertRepository {
  getSettings(accountId: string): Promise<AlertSettings | null>;
  setSettings(accountId: string, patch: Partial<AlertSettings>, now: number): Promise<AlertSettings | null>;
  /** Sets a key's own quota alert percent (null: the account's); false when the account has no such key. */
  setKeyQuotaPercent(accountId: string, keyId: string, percent: number | null, now: number): Promise<boolean>;
  /** The keys of an account that set their own quota alert percent. */
  keyQuotaPercents(accountId: string): Promise<Map<string, number>>;
  /** Alerts of one account (for the admin). */
  listByAccount(accountId: string): Promise<AlertState[]>;
  /** Notified alerts whose value is back on the good side of the threshold become armed again; returns how many. */
  rearm(now: number): Promise<number>;
  /** Subjects past their threshold whose crossing nobody has claimed yet, at most `limit` of each kind. */
  findCrossings(now: number, limit: number): Promise<AlertCrossing[]>;
  /** Claims a crossing with one conditional upsert: true for exactly one caller, however many race. */
  claim(crossing: AlertCrossing, now: number): Promise<boolean>;
  /** Pending alerts whose next attempt is due. */
  listDue(now: number, limit: number): Promise<AlertState[]>;
  /** Takes the delivery of a due alert until `leaseUntil` (conditional on the attempt count read): true for one caller. */
  lease(alert: AlertState, leaseUntil: number, now: number): Promise<boolean>;
  /** The leased attempt (`attempts` after the lease) delivered the mail. */
  markNotified(alert: Pick<AlertState, 'kind' | 'subjectId'>, attempts: number, now: number): Promise<void>;
  /** The leased attempt failed: try again from `retryAt`. */
  markFailed(alert: Pick<AlertState, 'kind' | 'subjectId'>, attempts: number, retryAt: number, error: string, now: number): Promise<void>;
}

const BUDGET_PERIODS: readonly BudgetPeriod[] = ['day', 'week', 'month'];

function toState(row: Selectable<AlertStatesTable>): AlertState {
  return {
    kind: toOneOf(row.kind, ALERT_KINDS, 'alert kind'),
    subjectId: row.subject_id,
    accountId: row.account_id,
    periodStart: toNumber(row.period_start),
    state: toOneOf(row.state, STATE_NAMES, 'alert state'),
    valueNano: toBigInt(row.value_nano),
    thresholdNano: toBigInt(row.threshold_nano),
    limitNano: toNullableBigInt(row.limit_nano),
    percent: toNullableNumber(row.percent),
    crossedAt: toNumber(row.crossed_at),
    attempts: toNumber(row.attempts),
    nextAttemptAt: toNumber(row.next_attempt_at),
    notifiedAt: toNullableNumber(row.notified_at),
    lastError: row.last_error,
    updatedAt: toNumber(row.updated_at),
  };
}

/**
 * ceil(quota × percent / 100) without overflowing 64 bits for any quota up to a billion USD:
 * quota = 100a + b → a·percent + ceil(b·percent / 100). Same formula as `quotaThresholdNano` in src/alerts/.
 */
function percentOf(quota: Expression<unknown>, percent: Expression<unknown>) {
  return sql<bigint>`((${quota} / 100) * ${percent} + ((${quota} % 100) * ${percent} + 99) / 100)`;
}

const funds = sql<bigint>`(${sql.ref('accounts.balance_nano')} + ${sql.ref('accounts.credit_line_nano')})`;

function settingsOf(row: Pick<Selectable<AccountsTable>, 'alert_balance_nano' | 'alert_quota_percent'>): AlertSettings {
  return { balanceNano: toNullableBigInt(row.alert_balance_nano), quotaPercent: toNullableNumber(row.alert_quota_percent) };
}

export function createAlertRepository(db: Kysely<Database>): AlertRepository {
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

  return {
    async getSettings(accountId) {
      const row = await db.selectFrom('accounts').select(['alert_balance_nano', 'alert_quota_percent']).where('id', '=', accountId).executeTakeFirst();
      return row === undefined ? null : settingsOf(row);
    },

    async setSettings(accountId, patch, now) {
      const changes: Updateable<AccountsTable> = { updated_at: now };
      if (patch.balanceNano !== undefined) changes.alert_balance_nano = patch.balanceNano;
      if (patch.quotaPercent !== undefined) changes.alert_quota_percent = patch.quotaPercent;
      const row = await db.updateTable('accounts').set(changes).where('id', '=', accountId)
        .returning(['alert_balance_nano', 'alert_quota_percent']).executeTakeFirst();
      return row === undefined ? null : settingsOf(row);
    },

    async setKeyQuotaPercent(accountId, keyId, percent, now) {
      const updated = await db.updateTable('api_keys').set({ alert_quota_percent: percent, updated_at: now })
        .where('id', '=', keyId).where('account_id', '=', accountId).executeTakeFirst();
      return updated.numUpdatedRows > 0n;
    },

    async keyQuotaPercents(accountId) {
      const rows = await db.selectFrom('api_keys').select(['id', 'alert_quota_percent'])
        .where('account_id', '=', accountId).where('alert_quota_percent', 'is not', null).execute();
      return new Map(rows.map((row) => [row.id, toNumber(row.alert_quota_percent)]));
    },

    async listByAccount(accountId) {
      const rows = await db.selectFrom('alert_states').selectAll().where('account_id', '=', accountId)
        .orderBy('kind').orderBy('subject_id').limit(1000).execute();
      return rows.map(toState);
    },

    async rearm(now) {
      let total = 0n;
      for (const kind of ALERT_KINDS) {
        const result = await db.updateTable('alert_states')
          .set({ state: 'armed', updated_at: now })
          .where('kind', '=', kind)
          .where('state', '=', 'notified')
          .where((where) => {
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
          })
          .executeTakeFirst();
        total += result.numUpdatedRows;
      }
      return Number(total);
    },

    async findCrossings(now, limit) {
      const balances = await db.selectFrom('accounts')
        .leftJoin('alert_states', (join) => join.on('alert_states.kind', '=', 'balance').onRef('alert_states.subject_id', '=', 'accounts.id'))
        .select(['accounts.id as subject_id', 'accounts.alert_balance_nano as threshold'])
        .select(funds.as('value'))
        .where('accounts.alert_balance_nano', 'is not', null)
        .where(fundsBelowThreshold)
        .where((where) => where.or([where('alert_states.state', 'is', null), where('alert_states.state', '=', 'armed')]))
        .limit(limit)
        .execute();
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
      const paused = await db.selectFrom('api_keys')
        .leftJoin('alert_states', (join) => join.on('alert_states.kind', '=', 'key_paused').onRef('alert_states.subject_id', '=', 'api_keys.id'))
        .select(['api_keys.id as subject_id', 'api_keys.account_id', 'api_keys.spent_nano as value', 'api_keys.quota_nano as quota'])
        .where('api_keys.status', '<>', 'revoked')
        .where('api_keys.quota_nano', '>', 0n)
        .where(keyQuotaUsedUp)
        .where((where) => where.or([where('alert_states.state', 'is', null), where('alert_states.state', '=', 'armed')]))
        .limit(limit)
        .execute();
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

      const crossings: AlertCrossing[] = [];
      for (const row of balances) {
        crossings.push({
          kind: 'balance', subjectId: row.subject_id, accountId: row.subject_id, periodStart: 0,
          valueNano: toBigInt(row.value), thresholdNano: toBigInt(row.threshold), limitNano: null, percent: null,
        });
      }
      for (const row of keys) {
        crossings.push({
          kind: 'key_quota', subjectId: row.subject_id, accountId: row.account_id, periodStart: 0,
          valueNano: toBigInt(row.value), thresholdNano: toBigInt(row.threshold), limitNano: toBigInt(row.quota), percent: toNullableNumber(row.percent),
        });
      }
      for (const row of paused) {
        crossings.push({
          kind: 'key_paused', subjectId: row.subject_id, accountId: row.account_id, periodStart: 0,
          valueNano: toBigInt(row.value), thresholdNano: toBigInt(row.quota), limitNano: toBigInt(row.quota), percent: 100,
        });
      }
      for (const row of budgetPaused) {
        crossings.push({
          kind: 'key_budget_paused', subjectId: row.subject_id, accountId: row.account_id, periodStart: toNumber(row.period_start),
          valueNano: toBigInt(row.value), thresholdNano: toBigInt(row.quota), limitNano: toBigInt(row.quota), percent: 100,
        });
      }
      for (const row of subscriptions) {
        crossings.push({
          kind: 'subscription_quota', subjectId: row.subject_id, accountId: row.account_id, periodStart: toNumber(row.period_start),
          valueNano: toBigInt(row.value), thresholdNano: toBigInt(row.threshold), limitNano: toBigInt(row.quota), percent: toNullableNumber(row.percent),
        });
      }
      return crossings;
    },

    async claim(crossing, now) {
      const claimed = await db.insertInto('alert_states')
        .values({
          kind: crossing.kind,
          subject_id: crossing.subjectId,
          account_id: crossing.accountId,
          period_start: crossing.periodStart,
          state: 'pending',
          value_nano: crossing.valueNano,
          threshold_nano: crossing.thresholdNano,
          limit_nano: crossing.limitNano,
          percent: crossing.percent,
          crossed_at: now,
          attempts: 0,
          next_attempt_at: now,
          notified_at: null,
          last_error: null,
          updated_at: now,
        })
        .onConflict((conflict) => conflict.columns(['kind', 'subject_id']).doUpdateSet((update) => ({
          state: 'pending',
          period_start: update.ref('excluded.period_start'),
          value_nano: update.ref('excluded.value_nano'),
          threshold_nano: update.ref('excluded.threshold_nano'),
          limit_nano: update.ref('excluded.limit_nano'),
          percent: update.ref('excluded.percent'),
          crossed_at: update.ref('excluded.crossed_at'),
          attempts: 0,
          next_attempt_at: update.ref('excluded.next_attempt_at'),
          notified_at: null,
          last_error: null,
          updated_at: update.ref('excluded.updated_at'),
        })).where((where) => where.or([
          where('alert_states.state', '=', 'armed'),
          // A subscription's or key budget's new period: its previous crossing was already told.
          where.and([where('alert_states.state', '=', 'notified'), sql<SqlBool>`${sql.ref('alert_states.period_start')} < ${sql.ref('excluded.period_start')}`]),
        ])))
        .returning('subject_id')
        .executeTakeFirst();
      return claimed !== undefined;
    },

    async listDue(now, limit) {
      const rows = await db.selectFrom('alert_states').selectAll()
        .where('state', '=', 'pending').where('next_attempt_at', '<=', now)
        .orderBy('next_attempt_at').limit(limit).execute();
      return rows.map(toState);
    },

    async lease(alert, leaseUntil, now) {
      const result = await db.updateTable('alert_states')
        .set({ attempts: alert.attempts + 1, next_attempt_at: leaseUntil, updated_at: now })
        .where('kind', '=', alert.kind).where('subject_id', '=', alert.subjectId)
        .where('state', '=', 'pending').where('attempts', '=', alert.attempts).where('next_attempt_at', '<=', now)
        .executeTakeFirst();
      return result.numUpdatedRows === 1n;
    },

    async markNotified(alert, attempts, now) {
      await db.updateTable('alert_states')
        .set({ state: 'notified', notified_at: now, last_error: null, updated_at: now })
        .where('kind', '=', alert.kind).where('subject_id', '=', alert.subjectId)
        .where('state', '=', 'pending').where('attempts', '=', attempts)
        .execute();
    },

    async markFailed(alert, attempts, retryAt, error, now) {
      await db.updateTable('alert_states')
        .set({ next_attempt_at: retryAt, last_error: error.slice(0, 300), updated_at: now })
        .where('kind', '=', alert.kind).where('subject_id', '=', alert.subjectId)
        .where('state', '=', 'pending').where('attempts', '=', attempts)
        .execute();
    },
  };
}
