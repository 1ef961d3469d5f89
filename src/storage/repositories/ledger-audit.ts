import { sql, type Kysely } from 'kysely';
import { toBigInt } from '../convert.js';
import type { Database } from '../database-schema.js';
import type { NanoUsd } from '../../domain/records.js';
import type { LedgerAudit } from '../storage.js';

/** PostgreSQL sums of bigint are numeric (decimal strings); SQLite's are integers. */
function sumOf(column: string) {
  return sql<bigint | string>`coalesce(sum(${sql.ref(column)}), 0)`;
}

/** The raw sums the ledger check compares, of every account or of one. */
export async function auditLedger(db: Kysely<Database>, accountId: string | undefined): Promise<LedgerAudit> {
  const ledgerSums = db.selectFrom('ledger_entries').select(['account_id', sumOf('amount_nano').as('total')]).groupBy('account_id');
  const walletHolds = db
    .selectFrom('money_holds')
    .select(['account_id', sumOf('held_nano').as('held')])
    .where('pool', 'like', 'wallet:%')
    .groupBy('account_id');
  const reversals = db.selectFrom('ledger_entries').select(['account_id', sumOf('amount_nano').as('reversed')]).where('kind', '=', 'refund').groupBy('account_id');
  let accounts = db
    .selectFrom('accounts')
    .leftJoin(ledgerSums.as('sums'), 'sums.account_id', 'accounts.id')
    .leftJoin(walletHolds.as('holds'), 'holds.account_id', 'accounts.id')
    .leftJoin(reversals.as('reversals'), 'reversals.account_id', 'accounts.id')
    .select(['accounts.id', 'accounts.balance_nano', 'accounts.credit_line_nano', 'sums.total', 'holds.held', 'reversals.reversed'])
    .orderBy('accounts.id');
  if (accountId !== undefined) accounts = accounts.where('accounts.id', '=', accountId);

  const walletByKey = db.selectFrom('ledger_entries').select(['key_id', sumOf('amount_nano').as('total')]).where('kind', '=', 'usage').groupBy('key_id');
  const planByKey = db.selectFrom('subscription_usage').select(['key_id', sumOf('amount_nano').as('total')]).groupBy('key_id');
  let keys = db
    .selectFrom('api_keys')
    .leftJoin(walletByKey.as('wallet'), 'wallet.key_id', 'api_keys.id')
    .leftJoin(planByKey.as('plan'), 'plan.key_id', 'api_keys.id')
    .select(['api_keys.id', 'api_keys.account_id', 'api_keys.spent_nano', 'wallet.total as wallet_total', 'plan.total as plan_total'])
    .orderBy('api_keys.id');
  if (accountId !== undefined) keys = keys.where('api_keys.account_id', '=', accountId);

  let subscriptions = db
    .selectFrom('subscriptions')
    .select((expression) => {
      // The sum of one column of the subscription's usage rows in its current period.
      const periodSum = <Alias extends string>(column: 'amount_nano' | 'overage_nano', alias: Alias) => expression
        .selectFrom('subscription_usage')
        .select(sumOf(column).as('total'))
        .whereRef('subscription_usage.subscription_id', '=', 'subscriptions.id')
        .whereRef('subscription_usage.period_start', '=', 'subscriptions.current_period_start')
        .as(alias);
      return [
        'subscriptions.id',
        'subscriptions.account_id',
        'subscriptions.used_nano',
        'subscriptions.overage_used_nano',
        periodSum('amount_nano', 'usage_total'),
        periodSum('overage_nano', 'overage_total'),
      ] as const;
    })
    .orderBy('subscriptions.id');
  if (accountId !== undefined) subscriptions = subscriptions.where('subscriptions.account_id', '=', accountId);

  let duplicates = db
    .selectFrom('ledger_entries')
    .select('request_id')
    .where('kind', '=', 'usage')
    .where('request_id', 'is not', null)
    .groupBy('request_id')
    .having(sql`count(*)`, '>', 1);
  if (accountId !== undefined) duplicates = duplicates.where('account_id', '=', accountId);

  const [accountRows, keyRows, subscriptionRows, duplicateRows] = await Promise.all([accounts.execute(), keys.execute(), subscriptions.execute(), duplicates.execute()]);
  const amount = (value: unknown): NanoUsd => (value === null || value === undefined ? 0n : toBigInt(value));
  const report: LedgerAudit = {
    accounts: accountRows.map((row) => ({
      id: row.id, balanceNano: amount(row.balance_nano), creditLineNano: amount(row.credit_line_nano), ledgerSumNano: amount(row.total), heldNano: amount(row.held), reversedNano: amount(row.reversed),
    })),
    keys: keyRows.map((row) => ({
      id: row.id, accountId: row.account_id, spentNano: amount(row.spent_nano), usageSumNano: -amount(row.wallet_total) + amount(row.plan_total),
    })),
    subscriptions: subscriptionRows.map((row) => ({
      id: row.id,
      accountId: row.account_id,
      usedNano: amount(row.used_nano),
      overageUsedNano: amount(row.overage_used_nano),
      usageSumNano: amount(row.usage_total),
      overageSumNano: amount(row.overage_total),
    })),
    duplicateCharges: duplicateRows.map((row) => row.request_id ?? ''),
  };
  return report;
}

/** Sum of an account's positive ledger entries (credits) and of its negative ones (charges, corrections). */
export async function creditTotals(db: Kysely<Database>, accountId: string): Promise<{ creditedNano: NanoUsd; debitedNano: NanoUsd }> {
  const row = await db
    .selectFrom('ledger_entries')
    .select([
      sql<bigint | string>`coalesce(sum(case when ${sql.ref('amount_nano')} > 0 then ${sql.ref('amount_nano')} else 0 end), 0)`.as('credited'),
      sql<bigint | string>`coalesce(sum(case when ${sql.ref('amount_nano')} < 0 then ${sql.ref('amount_nano')} else 0 end), 0)`.as('debited'),
    ])
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return { creditedNano: toBigInt(row.credited), debitedNano: -toBigInt(row.debited) };
}
