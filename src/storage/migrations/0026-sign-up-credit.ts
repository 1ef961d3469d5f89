import type { Kysely } from 'kysely';

/**
 * The sign-up credit: a tier may set its own amount and lifetime (`tiers.signup_credit_nano`, `signup_credit_days`;
 * null: the gateway's); the address a console sign-up came from (`signup_addresses`, hashed); the claims that keep
 * the credit to once per email and per address (`signup_credit_claims`: `email:<hash>` for good, `ip:<hash>` for a
 * window); and each grant with its expiry and what was taken back of it (`signup_credit_grants`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('tiers').addColumn('signup_credit_nano', 'bigint').execute();
  await db.schema.alterTable('tiers').addColumn('signup_credit_days', 'integer').execute();
  await db.schema
    .createTable('signup_addresses')
    .addColumn('account_id', 'text', (column) => column.primaryKey())
    .addColumn('ip_hash', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    // Why no credit was given at verification (`email_used`, `address_used`, …); null: not decided yet, or given.
    .addColumn('refusal', 'text')
    .execute();
  await db.schema
    .createTable('signup_credit_claims')
    .addColumn('claim', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema
    .createTable('signup_credit_grants')
    .addColumn('account_id', 'text', (column) => column.primaryKey())
    .addColumn('ledger_entry_id', 'text', (column) => column.notNull())
    .addColumn('amount_nano', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('reclaimed_at', 'bigint')
    .addColumn('reclaimed_nano', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('signup_credit_grants_expiry_index').on('signup_credit_grants').columns(['reclaimed_at', 'expires_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('signup_credit_grants').ifExists().execute();
  await db.schema.dropTable('signup_credit_claims').ifExists().execute();
  await db.schema.dropTable('signup_addresses').ifExists().execute();
  await db.schema.alterTable('tiers').dropColumn('signup_credit_days').execute();
  await db.schema.alterTable('tiers').dropColumn('signup_credit_nano').execute();
}
