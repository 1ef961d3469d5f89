import type { Kysely } from 'kysely';

/**
 * The web console's people and their credentials, apart from accounts and API keys.
 *
 * - `api_keys.environment`: a free label (development, staging, production…); `created_by`: the console user who
 *   made the key (null for keys made through the admin API or the CLI); `playground`: 1 for the short-lived keys the
 *   console mints for its playground (hidden from key lists, revoked after their call).
 * - `console_users`: one per person (email, argon2id hash, the TOTP secret sealed with the secret key, the last
 *   TOTP time step accepted so a code cannot be replayed within its step).
 * - `account_members`: which user may act on which account, and in which role.
 * - `console_sessions`: server-side sessions, found by the SHA-256 of the cookie value (the value is never stored).
 * - `console_tokens`: single-use tokens (email verification, password reset, the sign-in second-factor challenge),
 *   stored as SHA-256, with expiry and the time they were used.
 * - `console_backup_codes`: second-factor backup codes, SHA-256 only, each usable once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('environment', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('created_by', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('playground', 'integer', (column) => column.notNull().defaultTo(0)).execute();

  await db.schema
    .createTable('console_users')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('email', 'text', (column) => column.notNull().unique())
    .addColumn('password_hash', 'text', (column) => column.notNull())
    .addColumn('email_verified_at', 'bigint')
    .addColumn('totp_secret_sealed', 'text')
    .addColumn('totp_pending_sealed', 'text')
    .addColumn('totp_enabled_at', 'bigint')
    .addColumn('totp_last_step', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();

  await db.schema
    .createTable('account_members')
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('user_id', 'text', (column) => column.notNull().references('console_users.id'))
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('account_members_pkey', ['account_id', 'user_id'])
    .execute();
  await db.schema.createIndex('account_members_user_id_index').on('account_members').column('user_id').execute();

  await db.schema
    .createTable('console_sessions')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('token_hash', 'text', (column) => column.notNull().unique())
    .addColumn('user_id', 'text', (column) => column.notNull().references('console_users.id'))
    .addColumn('account_id', 'text', (column) => column.notNull().references('accounts.id'))
    .addColumn('csrf_token', 'text', (column) => column.notNull())
    .addColumn('ip', 'text', (column) => column.notNull())
    .addColumn('user_agent', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('last_seen_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('console_sessions_user_id_index').on('console_sessions').column('user_id').execute();

  await db.schema
    .createTable('console_tokens')
    .addColumn('token_hash', 'text', (column) => column.primaryKey())
    .addColumn('kind', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.notNull().references('console_users.id'))
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('console_tokens_user_id_index').on('console_tokens').columns(['user_id', 'kind']).execute();

  await db.schema
    .createTable('console_backup_codes')
    .addColumn('user_id', 'text', (column) => column.notNull().references('console_users.id'))
    .addColumn('code_hash', 'text', (column) => column.notNull())
    .addColumn('used_at', 'bigint')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('console_backup_codes_pkey', ['user_id', 'code_hash'])
    .execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropTable('console_backup_codes').ifExists().execute();
  await db.schema.dropTable('console_tokens').ifExists().execute();
  await db.schema.dropTable('console_sessions').ifExists().execute();
  await db.schema.dropTable('account_members').ifExists().execute();
  await db.schema.dropTable('console_users').ifExists().execute();
  await db.schema.alterTable('api_keys').dropColumn('playground').execute();
  await db.schema.alterTable('api_keys').dropColumn('created_by').execute();
  await db.schema.alterTable('api_keys').dropColumn('environment').execute();
}
