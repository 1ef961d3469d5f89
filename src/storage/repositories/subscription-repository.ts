import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { fromBoolean, toBigInt, toBoolean, toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { Database, SubscriptionsTable } from '../database-schema.js';
import type { Subscription, SubscriptionStatus } from '../records.js';
import type { SubscriptionPatch, SubscriptionRepository } from '../storage.js';

const STATUSES: readonly SubscriptionStatus[] = ['active', 'cancelled'];

export function toSubscriptionRecord(row: Selectable<SubscriptionsTable>): Subscription {
  return {
    id: row.id,
    accountId: row.account_id,
    planId: row.plan_id,
    status: toOneOf(row.status, STATUSES, 'subscription status'),
    startsAt: toNumber(row.starts_at),
    currentPeriodStart: toNumber(row.current_period_start),
    currentPeriodEnd: toNumber(row.current_period_end),
    usedNano: toBigInt(row.used_nano),
    overageUsedNano: toBigInt(row.overage_used_nano),
    cancelAt: toNullableNumber(row.cancel_at),
    paidThrough: toNullableNumber(row.paid_through),
    renews: toBoolean(row.renews),
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
    overage_used_nano: subscription.overageUsedNano,
    cancel_at: subscription.cancelAt,
    paid_through: subscription.paidThrough,
    renews: fromBoolean(subscription.renews),
    created_at: subscription.createdAt,
    updated_at: subscription.updatedAt,
  };
}

export { toRow as subscriptionRow };

export function createSubscriptionRepository(db: Kysely<Database>): SubscriptionRepository {
  return {
    async create(subscription) {
      await db.insertInto('subscriptions').values(toRow(subscription)).execute();
    },

    async getById(id) {
      const row = await db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirst();
      return row === undefined ? null : toSubscriptionRecord(row);
    },

    /** Ordered by id (creation order for time-sortable ids). */
    async listByAccount(accountId) {
      const rows = await db.selectFrom('subscriptions').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
      return rows.map(toSubscriptionRecord);
    },

    async update(id, patch, now) {
      return updateSubscription(db, id, patch, now);
    },
  };
}

/** One UPDATE of the patched columns (also used inside money transactions). */
export async function updateSubscription(db: Kysely<Database>, id: string, patch: SubscriptionPatch, now: number): Promise<Subscription | null> {
  const changes: Updateable<SubscriptionsTable> = { updated_at: now };
  if (patch.planId !== undefined) changes.plan_id = patch.planId;
  if (patch.status !== undefined) changes.status = patch.status;
  if (patch.startsAt !== undefined) changes.starts_at = patch.startsAt;
  if (patch.currentPeriodStart !== undefined) changes.current_period_start = patch.currentPeriodStart;
  if (patch.currentPeriodEnd !== undefined) changes.current_period_end = patch.currentPeriodEnd;
  if (patch.cancelAt !== undefined) changes.cancel_at = patch.cancelAt;
  if (patch.paidThrough !== undefined) changes.paid_through = patch.paidThrough;
  if (patch.renews !== undefined) changes.renews = fromBoolean(patch.renews);
  if (patch.resetUsage === true) {
    changes.used_nano = 0n;
    changes.overage_used_nano = 0n;
  }
  const row = await db.updateTable('subscriptions').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
  return row === undefined ? null : toSubscriptionRecord(row);
}
