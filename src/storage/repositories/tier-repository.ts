import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import { toNullableBigInt, toNullableNumber, toNumber } from '../convert.js';
import type { Database, TiersTable } from '../database-schema.js';
import { pageLimit, toPage } from '../pagination.js';
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

export function createTierRepository(db: Kysely<Database>): TierRepository {
  return {
    async create(tier) {
      await db.insertInto('tiers').values(toRow(tier)).execute();
    },

    async getByName(name) {
      const row = await db.selectFrom('tiers').selectAll().where('name', '=', name).executeTakeFirst();
      return row === undefined ? null : toRecord(row);
    },

    async list(page) {
      const limit = pageLimit(page);
      let query = db.selectFrom('tiers').selectAll().orderBy('name').limit(limit + 1);
      if (page.after != null) query = query.where('name', '>', page.after);
      const rows = await query.execute();
      return toPage(rows.map(toRecord), limit, (tier) => tier.name);
    },

    async listAll() {
      const rows = await db.selectFrom('tiers').selectAll().orderBy('name').execute();
      return rows.map(toRecord);
    },

    async update(name, patch, now) {
      const row = await db.updateTable('tiers').set(toChanges(patch, now)).where('name', '=', name).returningAll().executeTakeFirst();
      return row === undefined ? null : toRecord(row);
    },

    async delete(name) {
      const result = await db.deleteFrom('tiers').where('name', '=', name).executeTakeFirst();
      return result.numDeletedRows > 0n;
    },
  };
}
