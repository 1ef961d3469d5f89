import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { toNullableBigInt, toNullableNumber, toNumber } from '../convert.js';
import type { Database, TiersTable } from '../database-schema.js';
import { tableAccess, type TableMapping } from './table-access.js';
import type { Tier } from '../../domain/records.js';
import type { TierPatch, TierRepository } from '../storage.js';

function toRecord(row: Selectable<TiersTable>): Tier {
  return {
    name: row.name,
    rpm: toNullableNumber(row.rpm),
    tpm: toNullableNumber(row.tpm),
    signupCreditNano: toNullableBigInt(row.signup_credit_nano),
    signupCreditDays: toNullableNumber(row.signup_credit_days),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

function toRow(tier: Tier): Insertable<TiersTable> {
  return { name: tier.name, rpm: tier.rpm, tpm: tier.tpm, signup_credit_nano: tier.signupCreditNano, signup_credit_days: tier.signupCreditDays, created_at: tier.createdAt, updated_at: tier.updatedAt };
}

function toChanges(patch: TierPatch, now: number): Updateable<TiersTable> {
  const changes: Updateable<TiersTable> = { updated_at: now };
  if (patch.rpm !== undefined) changes.rpm = patch.rpm;
  if (patch.tpm !== undefined) changes.tpm = patch.tpm;
  if (patch.signupCreditNano !== undefined) changes.signup_credit_nano = patch.signupCreditNano;
  if (patch.signupCreditDays !== undefined) changes.signup_credit_days = patch.signupCreditDays;
  return changes;
}

const TIERS: TableMapping<'tiers', Tier, TierPatch> = {
  table: 'tiers', key: 'name', keyOf: (tier) => tier.name, toRecord, toRow, toChanges,
};

export function createTierRepository(db: Kysely<Database>): TierRepository {
  const tiers = tableAccess(db, TIERS);
  return {
    create: tiers.insert,
    getByName: tiers.get,
    list: (page) => tiers.page(page),
    listAll: () => tiers.listAll(),
    update: tiers.update,
    delete: tiers.delete,
  };
}
