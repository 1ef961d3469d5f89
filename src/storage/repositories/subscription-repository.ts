import type { Insertable, Kysely, Selectable } from 'kysely';
import { toBigInt, toNumber, toOneOf } from '../convert.js';
import type { Database, SubscriptionsTable } from '../database-schema.js';
import type { Subscription, SubscriptionStatus } from '../records.js';
import type { SubscriptionRepository } from '../storage.js';

const STATUSES: readonly SubscriptionStatus[] = ['active', 'cancelled'];

function toRecord(row: Selectable<SubscriptionsTable>): Subscription {
  return {
    id: row.id,
    accountId: row.account_id,
    planId: row.plan_id,
    status: toOneOf(row.status, STATUSES, 'subscription status'),
    startsAt: toNumber(row.starts_at),
    currentPeriodStart: toNumber(row.current_period_start),
    currentPeriodEnd: toNumber(row.current_period_end),
    usedNano: toBigInt(row.used_nano),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

function toRow(subscription: Subscription): Insertable<SubscriptionsTable> {
  return {
    id: subscription.id,
    account_id: subscription.accountId,
    plan_id: subscription.planId,
    status: subscription.status,
    starts_at: subscription.startsAt,
    current_period_start: subscription.currentPeriodStart,
    current_period_end: subscription.currentPeriodEnd,
    used_nano: subscription.usedNano,
    created_at: subscription.createdAt,
    updated_at: subscription.updatedAt,
  };
}

export function createSubscriptionRepository(db: Kysely<Database>): SubscriptionRepository {
  return {
    async create(subscription) {
      await db.insertInto('subscriptions').values(toRow(subscription)).execute();
    },

    async getById(id) {
      const row = await db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : toRecord(row);
    },

    /** Ordered by id (creation order for time-sortable ids). */
    async listByAccount(accountId) {
      const rows = await db.selectFrom('subscriptions').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
      return rows.map(toRecord);
    },
  };
}
