import type { Migration, MigrationProvider } from 'kysely';
import * as initial from './0001-initial.js';
import * as accountTiers from './0002-account-tiers.js';
import * as routingHealth from './0003-routing-health.js';
import * as moneyHolds from './0004-money-holds.js';
// issue 6 extras (alerts, redemption codes); 0004 is money-core's.
import * as alertsAndRedemptionCodes from './0005-alerts-and-redemption-codes.js';
import * as wideLimitColumns from './0009-wide-limit-columns.js';

/**
 * Every migration, in code (no directory scanning, so it works from `src/` and `dist/` alike). Kysely runs them in
 * name order; add new ones as `0002-…` and register them here.
 */
const migrations: Record<string, Migration> = {
  '0001-initial': initial,
  '0002-account-tiers': accountTiers,
  '0003-routing-health': routingHealth,
  '0004-money-holds': moneyHolds,
  '0005-alerts-and-redemption-codes': alertsAndRedemptionCodes,
  '0009-wide-limit-columns': wideLimitColumns,
};

export const migrationProvider: MigrationProvider = {
  getMigrations: () => Promise.resolve(migrations),
};
