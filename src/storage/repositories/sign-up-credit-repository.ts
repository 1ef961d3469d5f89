import { sql, type Kysely } from 'kysely';
import { toBigInt, toNullableNumber, toNumber } from '../convert.js';
import type { Database } from '../database-schema.js';
import type { IntegerColumn, MoneyColumn, NullableIntegerColumn } from '../schema-columns.js';
import type { NanoUsd } from '../../domain/records.js';
import { applyCreditIn, type Dialect } from './ledger-repository.js';
import { coreTransaction } from './account-credit.js';

/** Tables of migration 0026, in the conventions of database-schema.ts. */
export interface SignUpAddressesTable {
  account_id: string;
  /** SHA-256 of the address a console sign-up came from (IPv6: its /64). */
  ip_hash: string;
  created_at: IntegerColumn;
  refusal: string | null;
}

export interface SignUpCreditClaimsTable {
  /** `email:<hash>` (held for good) or `ip:<hash>` (held for the address window). */
  claim: string;
  account_id: string;
  created_at: IntegerColumn;
}

export interface SignUpCreditGrantsTable {
  account_id: string;
  ledger_entry_id: string;
  amount_nano: MoneyColumn;
  expires_at: NullableIntegerColumn;
  reclaimed_at: NullableIntegerColumn;
  reclaimed_nano: MoneyColumn;
  created_at: IntegerColumn;
}

export type SignUpCreditTables = {
  signup_addresses: SignUpAddressesTable;
  signup_credit_claims: SignUpCreditClaimsTable;
  signup_credit_grants: SignUpCreditGrantsTable;
};

export interface SignUpCreditGrant {
  accountId: string;
  ledgerEntryId: string;
  amountNano: NanoUsd;
  expiresAt: number | null;
  reclaimedAt: number | null;
  reclaimedNano: NanoUsd;
  createdAt: number;
}

export interface GrantRequest {
  accountId: string;
  /** Hash of the verified email: one grant per email, ever (it outlives the account's deletion). */
  emailHash: string;
  /** Hashes of the addresses the person came from: one grant per address within `addressWindowMs`. */
  ipHashes: readonly string[];
  addressWindowMs: number;
  amountNano: NanoUsd;
  expiresAt: number | null;
  entryId: string;
  reason: string;
  now: number;
}

export type GrantOutcome =
  | { granted: true; balanceNano: NanoUsd }
  | { granted: false; reason: 'already_granted' | 'email_used' | 'address_used' | 'no_account' };

export interface ReclaimRequest {
  accountId: string;
  entryId: string;
  reason: string;
  now: number;
}

export interface SignUpCreditRepository {
  /** Keeps the (hashed) address a console sign-up came from, for the grant at verification. */
  recordSignUpAddress(accountId: string, ipHash: string, now: number): Promise<void>;
  signUpAddress(accountId: string): Promise<string | null>;
  /** Why the account's sign-up got no credit (kept to tell its owner); null when it got one or was never decided. */
  recordRefusal(accountId: string, reason: string): Promise<void>;
  refusal(accountId: string): Promise<string | null>;
  /**
   * In one transaction: claims the email and every address, records the grant, writes its `signup_credit` ledger
   * entry and raises the balance; nothing at all when any claim is already held.
   */
  grant(request: GrantRequest): Promise<GrantOutcome>;
  getGrant(accountId: string): Promise<SignUpCreditGrant | null>;
  /** Accounts whose grant expired at `now` and has not been settled yet. */
  dueExpiries(now: number, limit: number): Promise<string[]>;
  /**
   * Settles an expired grant once across every instance: what is left of the credit (spent before any money paid in
   * since) is taken back with a negative `signup_credit` entry. Returns the amount taken back, or null when there was
   * nothing to settle.
   */
  reclaim(request: ReclaimRequest): Promise<NanoUsd | null>;
}

class ClaimHeld extends Error {
  constructor(readonly reason: 'email_used' | 'address_used' | 'already_granted') {
    super(reason);
  }
}

function toGrant(row: { account_id: string; ledger_entry_id: string; amount_nano: unknown; expires_at: unknown; reclaimed_at: unknown; reclaimed_nano: unknown; created_at: unknown }): SignUpCreditGrant {
  return {
    accountId: row.account_id,
    ledgerEntryId: row.ledger_entry_id,
    amountNano: toBigInt(row.amount_nano),
    expiresAt: toNullableNumber(row.expires_at),
    reclaimedAt: toNullableNumber(row.reclaimed_at),
    reclaimedNano: toBigInt(row.reclaimed_nano),
    createdAt: toNumber(row.created_at),
  };
}

type Tables = Database & SignUpCreditTables;

export function createSignUpCreditRepository(db: Kysely<Tables>, dialect: Dialect): SignUpCreditRepository {
  return {
    async recordSignUpAddress(accountId, ipHash, now) {
      await db.insertInto('signup_addresses').values({ account_id: accountId, ip_hash: ipHash, created_at: now, refusal: null })
        .onConflict((conflict) => conflict.column('account_id').doNothing()).execute();
    },

    async signUpAddress(accountId) {
      const row = await db.selectFrom('signup_addresses').select('ip_hash').where('account_id', '=', accountId).executeTakeFirst();
      return row?.ip_hash ?? null;
    },

    async recordRefusal(accountId, reason) {
      await db.updateTable('signup_addresses').set({ refusal: reason }).where('account_id', '=', accountId).execute();
    },

    async refusal(accountId) {
      const row = await db.selectFrom('signup_addresses').select('refusal').where('account_id', '=', accountId).executeTakeFirst();
      return row?.refusal ?? null;
    },

    async grant(request) {
      try {
        return await db.transaction().execute(async (trx): Promise<GrantOutcome> => {
          const existing = await trx.selectFrom('signup_credit_grants').select('account_id').where('account_id', '=', request.accountId).executeTakeFirst();
          if (existing !== undefined) throw new ClaimHeld('already_granted');
          const email = await trx.insertInto('signup_credit_claims')
            .values({ claim: `email:${request.emailHash}`, account_id: request.accountId, created_at: request.now })
            .onConflict((conflict) => conflict.column('claim').doNothing())
            .returning('claim').executeTakeFirst();
          if (email === undefined) throw new ClaimHeld('email_used');
          for (const ipHash of new Set(request.ipHashes)) {
            // An address's claim lapses after the window: taken over then, refused while it lasts.
            const address = await trx.insertInto('signup_credit_claims')
              .values({ claim: `ip:${ipHash}`, account_id: request.accountId, created_at: request.now })
              .onConflict((conflict) => conflict.column('claim')
                .doUpdateSet({ account_id: request.accountId, created_at: request.now })
                .where('signup_credit_claims.created_at', '<=', request.now - request.addressWindowMs))
              .returning('claim').executeTakeFirst();
            if (address === undefined) throw new ClaimHeld('address_used');
          }
          await trx.insertInto('signup_credit_grants').values({
            account_id: request.accountId, ledger_entry_id: request.entryId, amount_nano: request.amountNano,
            expires_at: request.expiresAt, reclaimed_at: null, reclaimed_nano: 0n, created_at: request.now,
          }).execute();
          const balance = await applyCreditIn(coreTransaction(trx), dialect, {
            entryId: request.entryId, accountId: request.accountId, kind: 'signup_credit', amountNano: request.amountNano,
            reason: request.reason, createdAt: request.now,
          });
          if (balance === null) throw new NoAccount();
          return { granted: true, balanceNano: balance };
        });
      } catch (error) {
        if (error instanceof ClaimHeld) return { granted: false, reason: error.reason };
        if (error instanceof NoAccount) return { granted: false, reason: 'no_account' };
        throw error;
      }
    },

    async getGrant(accountId) {
      const row = await db.selectFrom('signup_credit_grants').selectAll().where('account_id', '=', accountId).executeTakeFirst();
      return row === undefined ? null : toGrant(row);
    },

    async dueExpiries(now, limit) {
      const rows = await db.selectFrom('signup_credit_grants').select('account_id')
        .where('reclaimed_at', 'is', null).where('expires_at', 'is not', null).where('expires_at', '<=', now)
        .orderBy('expires_at').limit(limit).execute();
      return rows.map((row) => row.account_id);
    },

    async reclaim(request) {
      return db.transaction().execute(async (trx): Promise<NanoUsd | null> => {
        let lookup = trx.selectFrom('signup_credit_grants').selectAll().where('account_id', '=', request.accountId).where('reclaimed_at', 'is', null);
        if (dialect === 'postgres') lookup = lookup.forUpdate();
        const row = await lookup.executeTakeFirst();
        if (row === undefined) return null;
        const grant = toGrant(row);
        if (grant.expiresAt === null || grant.expiresAt > request.now) return null;
        const account = await trx.selectFrom('accounts').select('balance_nano').where('id', '=', request.accountId).executeTakeFirst();
        // Money paid in since the grant (top-ups, codes, rewards, credits) is the account's own: the sign-up credit
        // counts as spent first, and only what the balance holds beyond that money is taken back.
        const paidIn = await trx.selectFrom('ledger_entries')
          .select(sql<string | number | bigint>`coalesce(sum(amount_nano), 0)`.as('total'))
          .where('account_id', '=', request.accountId).where('created_at', '>=', grant.createdAt)
          .where('amount_nano', '>', 0n).where('kind', '!=', 'usage').where('id', '!=', grant.ledgerEntryId)
          .executeTakeFirst();
        const balance = account === undefined ? 0n : toBigInt(account.balance_nano);
        const beyondPaid = balance - toBigInt(paidIn?.total ?? 0);
        const unused = beyondPaid <= 0n ? 0n : beyondPaid < grant.amountNano ? beyondPaid : grant.amountNano;
        await trx.updateTable('signup_credit_grants').set({ reclaimed_at: request.now, reclaimed_nano: unused }).where('account_id', '=', request.accountId).execute();
        if (unused > 0n) {
          await applyCreditIn(coreTransaction(trx), dialect, {
            entryId: request.entryId, accountId: request.accountId, kind: 'signup_credit', amountNano: -unused, reason: request.reason, createdAt: request.now,
          });
        }
        return unused;
      });
    },
  };
}

class NoAccount extends Error {}
