import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { fromBoolean, toBigInt, toBoolean, toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { Database, SubscriptionsTable } from '../database-schema.js';
import type { Subscription, SubscriptionStatus } from '../../domain/records.js';
import type { SubscriptionPatch, SubscriptionRepository } from '../storage.js';
import { tableAccess, type TableAccess, type TableMapping } from './table-access.js';

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

/** `resetUsage` zeroes the period's used quota and overage (a new period starts). */
function toChanges(patch: SubscriptionPatch, now: number): Updateable<SubscriptionsTable> {
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
  return changes;
}

const SUBSCRIPTIONS: TableMapping<'subscriptions', Subscription, SubscriptionPatch> = {
  table: 'subscriptions', key: 'id', keyOf: (subscription) => subscription.id, toRecord: toSubscriptionRecord, toRow, toChanges,
};

/** The subscriptions table inside any connection or transaction (money transactions and plan purchases use it too). */
export function subscriptionTable(db: Kysely<Database>): TableAccess<'subscriptions', Subscription, SubscriptionPatch> {
  return tableAccess(db, SUBSCRIPTIONS);
}

export function createSubscriptionRepository(db: Kysely<Database>): SubscriptionRepository {
  const subscriptions = subscriptionTable(db);
  return {
    create: subscriptions.insert,
    getById: subscriptions.get,
    /** Ordered by id (creation order for time-sortable ids). */
    listByAccount: (accountId) => subscriptions.listAll({ account_id: accountId }),
    update: subscriptions.update,
  };
}
