import type { Kysely, Updateable } from 'kysely';
import type { Database, SubscriptionsTable } from '../database-schema.js';
import type { Subscription, SubscriptionStatus } from '../../domain/records.js';
import type { SubscriptionPatch, SubscriptionRepository } from '../storage.js';
import { flag, integer, money, nullableInteger, oneOf, recordMapping, text } from './record-columns.js';
import { tableAccess, type TableAccess, type TableMapping } from './table-access.js';

const STATUSES: readonly SubscriptionStatus[] = ['active', 'cancelled'];

const SUBSCRIPTION_COLUMNS = recordMapping<SubscriptionsTable, Subscription, SubscriptionPatch>(
  {
    id: text, accountId: text, planId: text, status: oneOf(STATUSES, 'subscription status'), startsAt: integer, currentPeriodStart: integer,
    currentPeriodEnd: integer, usedNano: money, overageUsedNano: money, cancelAt: nullableInteger, paidThrough: nullableInteger, renews: flag,
    createdAt: integer, updatedAt: integer,
  },
  { planId: true, status: true, startsAt: true, currentPeriodStart: true, currentPeriodEnd: true, cancelAt: true, paidThrough: true, renews: true },
);

export const toSubscriptionRecord = SUBSCRIPTION_COLUMNS.toRecord;

/** `resetUsage` zeroes the period's used quota and overage (a new period starts). */
function toChanges(patch: SubscriptionPatch, now: number): Updateable<SubscriptionsTable> {
  const changes = SUBSCRIPTION_COLUMNS.toChanges(patch, now);
  if (patch.resetUsage === true) {
    changes.used_nano = 0n;
    changes.overage_used_nano = 0n;
  }
  return changes;
}

const SUBSCRIPTIONS: TableMapping<'subscriptions', Subscription, SubscriptionPatch> = {
  table: 'subscriptions', key: 'id', keyOf: (subscription) => subscription.id, toRecord: toSubscriptionRecord, toRow: SUBSCRIPTION_COLUMNS.toRow, toChanges,
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
