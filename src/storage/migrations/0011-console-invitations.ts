import type { Kysely } from 'kysely';

/**
 * `console_invitations`: an owner's or admin's invitation of a person (by email) into an account with a role. The
 * mailed link carries a random token; only its SHA-256 is stored. An invitation is used once (accepted_at) or
 * withdrawn (revoked_at), and is void after expires_at.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('console_invitations')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('email', 'text', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('invited_by', 'text', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('accepted_at', 'bigint')
    .addColumn('accepted_by', 'text')
    .addColumn('revoked_at', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('console_invitations_account_index').on('console_invitations').columns(['account_id', 'created_at']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('console_invitations').ifExists().execute();
}
