import { sql } from 'kysely';
import type { Kysely } from 'kysely';

/**
 * Account tiers: per-account RPM and TPM by tier name (`accounts.tier` names one). The built-in `default` tier is
 * created unlimited; an operator sets its limits like any other tier's. Limits are `bigint`: token rates of a
 * large account exceed 32 bits.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('tiers')
    .addColumn('name', 'text', (column) => column.primaryKey())
    .addColumn('rpm', 'bigint')
    .addColumn('tpm', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  const now = Date.now();
  await sql`insert into tiers (name, rpm, tpm, created_at, updated_at) values ('default', null, null, ${now}, ${now})`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('tiers').ifExists().execute();
}
