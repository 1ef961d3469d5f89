import type { Kysely, Updateable } from 'kysely';
import type { Database } from '../database-schema.js';
import type { RedemptionCodesTable } from '../money-schema.js';
import { chunk, pageLimit, rowsPerStatement, toPage } from '../pagination.js';
import type { NanoUsd, Page, PageRequest } from '../../domain/records.js';
import { BalanceLimitError } from '../storage.js';
import { creditLockedAccount } from './account-credit.js';
import { integer, money, nullableInteger, nullableText, recordMapping, text } from './record-columns.js';

/** A code worth `amountNano`, redeemable once. Only the SHA-256 of the code is kept. */
export interface RedemptionCode {
  id: string;
  codeHash: string;
  /** Safe to show: prefix and last four characters, e.g. `UNIGATE-…7K2Q`. */
  hint: string;
  name: string;
  amountNano: NanoUsd;
  expiresAt: number | null;
  disabledAt: number | null;
  redeemedBy: string | null;
  redeemedAt: number | null;
  /** The `topup` ledger entry the redemption wrote. */
  ledgerEntryId: string | null;
  createdAt: number;
  updatedAt: number;
}

export type RedemptionCodeState = 'active' | 'redeemed' | 'disabled' | 'expired';

export function redemptionCodeState(code: RedemptionCode, now: number): RedemptionCodeState {
  if (code.redeemedAt !== null) return 'redeemed';
  if (code.disabledAt !== null) return 'disabled';
  if (code.expiresAt !== null && code.expiresAt <= now) return 'expired';
  return 'active';
}

export interface RedemptionCodeFilter {
  state?: RedemptionCodeState;
  /** Codes redeemed by this account. */
  redeemedBy?: string;
}

export type RedemptionCodePatch = Partial<Pick<RedemptionCode, 'name' | 'expiresAt' | 'disabledAt'>>;

export type RedemptionCodeUpdate =
  | { outcome: 'updated'; code: RedemptionCode }
  | { outcome: 'not_found' }
  /** A redeemed code keeps its expiry and cannot be disabled any more. */
  | { outcome: 'redeemed'; code: RedemptionCode };

export interface Redemption {
  codeHash: string;
  accountId: string;
  /** Id of the `topup` ledger entry to write. */
  ledgerEntryId: string;
  now: number;
  /** Refuse (BalanceLimitError, nothing written, the code stays unredeemed) past this balance. */
  maxBalanceNano?: NanoUsd;
}

export type RedemptionOutcome =
  | { ok: true; code: RedemptionCode; balanceNano: NanoUsd }
  | { ok: false; reason: 'not_found' | 'no_account' }
  | { ok: false; reason: 'redeemed' | 'disabled' | 'expired'; code: RedemptionCode };

export interface RedemptionCodeRepository {
  /** Inserts a batch in one transaction (all or none). */
  createMany(codes: RedemptionCode[]): Promise<void>;
  getById(id: string): Promise<RedemptionCode | null>;
  /** Oldest first (ids are time-sortable), exclusive id cursor. */
  list(filter: RedemptionCodeFilter, page: PageRequest, now: number): Promise<Page<RedemptionCode>>;
  update(id: string, patch: RedemptionCodePatch, now: number): Promise<RedemptionCodeUpdate>;
  /**
   * Exactly once, in one transaction: claims the code (only while it is unredeemed, enabled and unexpired), writes
   * an immutable `topup` ledger entry naming the code's id (never the code) and raises the account's balance.
   */
  redeem(redemption: Redemption): Promise<RedemptionOutcome>;
}

const COLUMNS = 12;

const { toRecord, toRow } = recordMapping<RedemptionCodesTable, RedemptionCode>({
  id: text, codeHash: text, hint: text, name: text, amountNano: money, expiresAt: nullableInteger, disabledAt: nullableInteger,
  redeemedBy: nullableText, redeemedAt: nullableInteger, ledgerEntryId: nullableText, createdAt: integer, updatedAt: integer,
});

export function createRedemptionCodeRepository(db: Kysely<Database>, dialect: 'sqlite' | 'postgres'): RedemptionCodeRepository {
  const byId = async (id: string): Promise<RedemptionCode | null> => {
    const row = await db.selectFrom('redemption_codes').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? null : toRecord(row);
  };
  const byHash = async (codeHash: string, executor: Kysely<Database> = db): Promise<RedemptionCode | null> => {
    const row = await executor.selectFrom('redemption_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
    return row === undefined ? null : toRecord(row);
  };

  return {
    async createMany(codes) {
      if (codes.length === 0) return;
      await db.transaction().execute(async (trx) => {
        for (const part of chunk(codes.map(toRow), rowsPerStatement(COLUMNS))) await trx.insertInto('redemption_codes').values(part).execute();
      });
    },

    getById: byId,

    async list(filter, page, now) {
      const limit = pageLimit(page);
      let query = db.selectFrom('redemption_codes').selectAll().orderBy('id').limit(limit + 1);
      if (page.after != null) query = query.where('id', '>', page.after);
      if (filter.redeemedBy !== undefined) query = query.where('redeemed_by', '=', filter.redeemedBy);
      switch (filter.state) {
        case undefined:
          break;
        case 'redeemed':
          query = query.where('redeemed_at', 'is not', null);
          break;
        case 'disabled':
          query = query.where('redeemed_at', 'is', null).where('disabled_at', 'is not', null);
          break;
        case 'expired':
          query = query.where('redeemed_at', 'is', null).where('disabled_at', 'is', null).where('expires_at', '<=', now);
          break;
        case 'active':
          query = query.where('redeemed_at', 'is', null).where('disabled_at', 'is', null)
            .where((where) => where.or([where('expires_at', 'is', null), where('expires_at', '>', now)]));
          break;
        default: {
          const unknown: never = filter.state;
          throw new TypeError(`unknown redemption code state ${String(unknown)}`);
        }
      }
      const rows = await query.execute();
      return toPage(rows.map(toRecord), limit, (code) => code.id);
    },

    async update(id, patch, now) {
      const changes: Updateable<RedemptionCodesTable> = { updated_at: now };
      if (patch.name !== undefined) changes.name = patch.name;
      if (patch.expiresAt !== undefined) changes.expires_at = patch.expiresAt;
      if (patch.disabledAt !== undefined) changes.disabled_at = patch.disabledAt;
      // Expiry and the disabled mark only mean something before redemption: a redeemed code keeps them as they were.
      const guarded = patch.expiresAt !== undefined || patch.disabledAt !== undefined;
      let query = db.updateTable('redemption_codes').set(changes).where('id', '=', id);
      if (guarded) query = query.where('redeemed_at', 'is', null);
      const row = await query.returningAll().executeTakeFirst();
      if (row !== undefined) return { outcome: 'updated', code: toRecord(row) };
      const existing = await byId(id);
      return existing === null ? { outcome: 'not_found' } : { outcome: 'redeemed', code: existing };
    },

    async redeem({ codeHash, accountId, ledgerEntryId, now, maxBalanceNano }) {
      return db.transaction().execute(async (trx): Promise<RedemptionOutcome> => {
        let lookup = trx.selectFrom('accounts').select('id').where('id', '=', accountId);
        if (dialect === 'postgres') lookup = lookup.forNoKeyUpdate();
        if ((await lookup.executeTakeFirst()) === undefined) return { ok: false, reason: 'no_account' };

        // The claim: a concurrent redemption of the same code waits on this row and then finds it redeemed.
        const claimed = await trx
          .updateTable('redemption_codes')
          .set({ redeemed_by: accountId, redeemed_at: now, ledger_entry_id: ledgerEntryId, updated_at: now })
          .where('code_hash', '=', codeHash)
          .where('redeemed_at', 'is', null)
          .where('disabled_at', 'is', null)
          .where((where) => where.or([where('expires_at', 'is', null), where('expires_at', '>', now)]))
          .returningAll()
          .executeTakeFirst();
        if (claimed === undefined) {
          const code = await byHash(codeHash, trx);
          if (code === null) return { ok: false, reason: 'not_found' };
          const state = redemptionCodeState(code, now);
          // 'active' here would mean the row changed between the two statements; it can only have been redeemed.
          return { ok: false, reason: state === 'active' ? 'redeemed' : state, code };
        }
        const code = toRecord(claimed);
        // Under the account's lock taken above; the ledger entry id is new, so it is never a replay.
        const balanceNano = await creditLockedAccount(trx, {
          entryId: ledgerEntryId, accountId, kind: 'topup', amountNano: code.amountNano, reason: `redemption code ${code.id}`, createdAt: now,
        });
        if (balanceNano === null) throw new Error(`ledger entry ${ledgerEntryId} exists already`);
        // Thrown inside the transaction: the claim and the ledger entry are rolled back with it.
        if (maxBalanceNano !== undefined && balanceNano > maxBalanceNano) throw new BalanceLimitError(balanceNano - code.amountNano, maxBalanceNano);
        return { ok: true, code, balanceNano };
      });
    },
  };
}
