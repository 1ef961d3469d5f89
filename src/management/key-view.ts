import type { Ledger } from '../billing/ledger.js';
import type { Clock } from '../shared/clock.js';
import type { ApiKey } from '../domain/records.js';
import type { Storage } from '../storage/storage.js';
import { keyToJson } from './account-input.js';
import type { ApiKeyJson } from '../contract/keys.js';

/**
 * The JSON of an account's keys as admission sees them (admin API and console alike). Call it first — it writes every
 * settlement queued on this instance and reads what requests in flight hold — then read the keys and map them, so
 * `spent_usd`, the budget and the state agree with what the next request would be told.
 */
export async function keyViewOf(dependencies: { ledger: Ledger; storage: Storage; clock: Clock }, accountId: string): Promise<(key: ApiKey) => ApiKeyJson> {
  const holdsOf = await dependencies.ledger.keyHolds(accountId);
  const accountStatus = (await dependencies.storage.accounts.getById(accountId))?.status ?? 'deleted';
  const now = dependencies.clock.now();
  return (key) => keyToJson(key, { ...holdsOf(key.id), accountStatus }, now);
}
