import type { Kysely } from 'kysely';

/**
 * The gateway's operators in the web console, and what they did.
 *
 * - `console_operators`: which console user runs the gateway, and in which operator role (owner, admin, support,
 *   viewer). Separate from `account_members`: an operator role is over the whole deployment, not one account.
 * - `operator_audit_log`: one row per change an operator made through the console: who (user id and email at the
 *   time), the action (method and admin path), its target, the state before and after as JSON with secrets removed,
 *   the answer's status, the caller's IP and the time.
 * - `console_user_locks`: console users an operator locked out (no session starts or resolves while locked).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('console_operators')
    .addColumn('user_id', 'text', (column) => column.primaryKey().references('console_users.id'))
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('created_by', 'text')
    .execute();

  await db.schema
    .createTable('operator_audit_log')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('at', 'bigint', (column) => column.notNull())
    .addColumn('operator_id', 'text', (column) => column.notNull())
    .addColumn('operator_email', 'text', (column) => column.notNull())
    .addColumn('action', 'text', (column) => column.notNull())
    .addColumn('target', 'text', (column) => column.notNull())
    .addColumn('status', 'integer', (column) => column.notNull())
    .addColumn('before_json', 'text')
    .addColumn('after_json', 'text')
    .addColumn('ip', 'text', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('operator_audit_log_at_index').on('operator_audit_log').column('at').execute();

  await db.schema
    .createTable('console_user_locks')
    .addColumn('user_id', 'text', (column) => column.primaryKey().references('console_users.id'))
    .addColumn('reason', 'text', (column) => column.notNull())
    .addColumn('locked_by', 'text', (column) => column.notNull())
    .addColumn('locked_at', 'bigint', (column) => column.notNull())
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('console_user_locks').ifExists().execute();
  await db.schema.dropTable('operator_audit_log').ifExists().execute();
  await db.schema.dropTable('console_operators').ifExists().execute();
}
