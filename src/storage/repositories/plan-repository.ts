import type { Kysely } from 'kysely';
import type { Database, PlansTable } from '../database-schema.js';
import { flag, integer, money, nullableInteger, nullableMoney, oneOf, recordMapping, text } from './record-columns.js';
import { tableAccess, type TableMapping } from './table-access.js';
import type { OveragePolicy, Plan, PlanPeriod } from '../../domain/records.js';
import type { PlanPatch, PlanRepository } from '../storage.js';

const PERIODS: readonly PlanPeriod[] = ['day', 'week', 'month'];
const OVERAGE_POLICIES: readonly OveragePolicy[] = ['deny', 'limit', 'payg'];

const PLAN_COLUMNS = recordMapping<PlansTable, Plan, PlanPatch>(
  {
    id: text, name: text, period: oneOf(PERIODS, 'plan period'), quotaNano: money, overagePolicy: oneOf(OVERAGE_POLICIES, 'overage policy'),
    overageLimitNano: nullableMoney, rpm: nullableInteger, tpm: nullableInteger, selfService: flag, priceNano: money, createdAt: integer, updatedAt: integer,
  },
  { name: true, period: true, quotaNano: true, overagePolicy: true, overageLimitNano: true, rpm: true, tpm: true, selfService: true, priceNano: true },
);

export const toPlanRecord = PLAN_COLUMNS.toRecord;

const PLANS: TableMapping<'plans', Plan, PlanPatch> = { table: 'plans', key: 'id', keyOf: (plan) => plan.id, ...PLAN_COLUMNS };

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
