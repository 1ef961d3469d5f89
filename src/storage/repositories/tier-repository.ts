import type { Kysely } from 'kysely';
import type { Database, TiersTable } from '../database-schema.js';
import { integer, nullableInteger, nullableMoney, recordMapping, text } from './record-columns.js';
import { tableAccess, type TableMapping } from './table-access.js';
import type { Tier } from '../../domain/records.js';
import type { TierPatch, TierRepository } from '../storage.js';

const TIERS: TableMapping<'tiers', Tier, TierPatch> = {
  table: 'tiers', key: 'name', keyOf: (tier) => tier.name,
  ...recordMapping<TiersTable, Tier, TierPatch>(
    { name: text, rpm: nullableInteger, tpm: nullableInteger, signupCreditNano: nullableMoney, signupCreditDays: nullableInteger, createdAt: integer, updatedAt: integer },
    { rpm: true, tpm: true, signupCreditNano: true, signupCreditDays: true },
  ),
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
