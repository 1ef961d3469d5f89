import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { fromBoolean, toBigInt, toBoolean, toNullableBigInt, toNullableNumber, toNumber, toOneOf } from '../convert.js';
import type { Database, PlansTable } from '../database-schema.js';
import { tableAccess, type TableMapping } from './table-access.js';
import type { OveragePolicy, Plan, PlanPeriod } from '../../domain/records.js';
import type { PlanPatch, PlanRepository } from '../storage.js';

const PERIODS: readonly PlanPeriod[] = ['day', 'week', 'month'];
const OVERAGE_POLICIES: readonly OveragePolicy[] = ['deny', 'limit', 'payg'];

export function toPlanRecord(row: Selectable<PlansTable>): Plan {
  return {
    id: row.id,
    name: row.name,
    period: toOneOf(row.period, PERIODS, 'plan period'),
    quotaNano: toBigInt(row.quota_nano),
    overagePolicy: toOneOf(row.overage_policy, OVERAGE_POLICIES, 'overage policy'),
    overageLimitNano: toNullableBigInt(row.overage_limit_nano),
    rpm: toNullableNumber(row.rpm),
    tpm: toNullableNumber(row.tpm),
    selfService: toBoolean(row.self_service),
    priceNano: toBigInt(row.price_nano),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

function toRow(plan: Plan): Insertable<PlansTable> {
  return {
    id: plan.id,
    name: plan.name,
    period: plan.period,
    quota_nano: plan.quotaNano,
    overage_policy: plan.overagePolicy,
    overage_limit_nano: plan.overageLimitNano,
    rpm: plan.rpm,
    tpm: plan.tpm,
    self_service: fromBoolean(plan.selfService),
    price_nano: plan.priceNano,
    created_at: plan.createdAt,
    updated_at: plan.updatedAt,
  };
}

function toChanges(patch: PlanPatch, now: number): Updateable<PlansTable> {
  const changes: Updateable<PlansTable> = { updated_at: now };
  if (patch.name !== undefined) changes.name = patch.name;
  if (patch.period !== undefined) changes.period = patch.period;
  if (patch.quotaNano !== undefined) changes.quota_nano = patch.quotaNano;
  if (patch.overagePolicy !== undefined) changes.overage_policy = patch.overagePolicy;
  if (patch.overageLimitNano !== undefined) changes.overage_limit_nano = patch.overageLimitNano;
  if (patch.rpm !== undefined) changes.rpm = patch.rpm;
  if (patch.tpm !== undefined) changes.tpm = patch.tpm;
  if (patch.selfService !== undefined) changes.self_service = fromBoolean(patch.selfService);
  if (patch.priceNano !== undefined) changes.price_nano = patch.priceNano;
  return changes;
}

const PLANS: TableMapping<'plans', Plan, PlanPatch> = {
  table: 'plans', key: 'id', keyOf: (plan) => plan.id, toRecord: toPlanRecord, toRow, toChanges,
};

export function createPlanRepository(db: Kysely<Database>): PlanRepository {
  const plans = tableAccess(db, PLANS);
  return {
    create: plans.insert,
    getById: plans.get,
    getByName: (name) => plans.getBy('name', name),
    list: (page) => plans.page(page),
    update: plans.update,
  };
}
