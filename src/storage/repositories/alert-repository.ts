import { sql } from 'kysely';
import type { Kysely, Selectable, SqlBool, Updateable } from 'kysely';
import { toBigInt, toNullableBigInt, toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { AccountsTable } from '../database-schema.js';
import type { AlertStatesTable } from '../alert-schema.js';
import type { NanoUsd } from '../../domain/records.js';
import { ALERT_KINDS, findCrossings, rearmAlerts, type AlertDatabase } from './alert-crossings.js';

/**
 * What an alert watches: an account's funds, a key's spend against its quota, a subscription's use of its period
 * quota; `key_paused`: a key whose quota cap is used up (paused until it is raised); `key_budget_paused`: a key whose
 * daily, weekly or monthly budget is used up (paused until the period ends or the limit is raised, once per period).
 * Both paused kinds are told to webhooks only. `project_budget` and `customer_budget`: a project's or an end customer's
 * daily, weekly or monthly budget reaching the account's alert percent, once per period and threshold.
 */
export type AlertKind = 'balance' | 'key_quota' | 'subscription_quota' | 'key_paused' | 'key_budget_paused' | 'project_budget' | 'customer_budget';

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
  /**
   * The account id (balance), key id (key kinds), subscription id (subscription_quota), project id (project_budget),
   * or `<account id>:<customer>` (customer_budget: see `customerSubjectId`).
   */
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

function settingsOf(row: Pick<Selectable<AccountsTable>, 'alert_balance_nano' | 'alert_quota_percent'>): AlertSettings {
  return { balanceNano: toNullableBigInt(row.alert_balance_nano), quotaPercent: toNullableNumber(row.alert_quota_percent) };
}

/**
 * Claims a crossing to be told: a new alert state, or an armed one (or one told in an earlier period) made pending
 * again. False when another instance claimed it first or it was told in this period already.
 */
async function claimCrossing(db: Kysely<AlertDatabase>, crossing: AlertCrossing, now: number): Promise<boolean> {
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
}

export function createAlertRepository(db: Kysely<AlertDatabase>): AlertRepository {
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

    rearm: (now) => rearmAlerts(db, now),
    findCrossings: (now, limit) => findCrossings(db, now, limit),

    claim: (crossing, now) => claimCrossing(db, crossing, now),

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
