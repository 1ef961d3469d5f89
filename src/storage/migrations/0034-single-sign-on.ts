import type { Kysely } from 'kysely';

/**
 * Single sign-on and SCIM provisioning (sso-schema.ts):
 *
 * - `sso_connections`: one OpenID Connect client per owner: `operator` (the operators' connection set in the console;
 *   the OIDC_* settings take its place when given) or an account id; `operator_domains` (JSON array) limits who signs in
 *   through the operators' connection. The client secret is sealed with the gateway's
 *   secret key; `scim_token_hash` is the SHA-256 of the account's SCIM bearer token.
 * - `sso_domains`: the email domains an account's connection answers for; a domain belongs to one account at most.
 * - `sso_identities`: which console user a provider's subject is, per connection.
 * - `sso_logins`: sign-ins under way: the state's hash, the nonce, the sealed PKCE verifier and the hash of the
 *   browser's binding cookie; used once, then kept only until they expire.
 * - `scim_users`, `scim_groups`, `scim_group_members`: what an account's directory provisioned.
 * - `console_sessions.sso_connection_id`: the connection a session was signed in through (null: password).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('sso_connections')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('owner', 'text', (column) => column.notNull().unique())
    .addColumn('issuer', 'text', (column) => column.notNull())
    .addColumn('client_id', 'text', (column) => column.notNull())
    .addColumn('client_secret_sealed', 'text', (column) => column.notNull())
    .addColumn('require_sso', 'integer', (column) => column.notNull().defaultTo(0))
    .addColumn('jit_role', 'text')
    .addColumn('role_claim', 'text')
    .addColumn('role_map', 'text', (column) => column.notNull().defaultTo('{}'))
    .addColumn('operator_domains', 'text', (column) => column.notNull().defaultTo('[]'))
    .addColumn('enabled', 'integer', (column) => column.notNull().defaultTo(1))
    .addColumn('scim_token_hash', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('sso_connections_scim_token').on('sso_connections').column('scim_token_hash').unique().execute();

  await db.schema.createTable('sso_domains')
    .addColumn('domain', 'text', (column) => column.primaryKey())
    .addColumn('connection_id', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('sso_domains_connection').on('sso_domains').column('connection_id').execute();

  await db.schema.createTable('sso_identities')
    .addColumn('connection_id', 'text', (column) => column.notNull())
    .addColumn('subject', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('last_sign_in_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('sso_identities_pk', ['connection_id', 'subject'])
    .addUniqueConstraint('sso_identities_connection_user', ['connection_id', 'user_id'])
    .execute();

  await db.schema.createTable('sso_logins')
    .addColumn('state_hash', 'text', (column) => column.primaryKey())
    .addColumn('connection_id', 'text', (column) => column.notNull())
    .addColumn('browser_hash', 'text', (column) => column.notNull())
    .addColumn('nonce', 'text', (column) => column.notNull())
    .addColumn('verifier_sealed', 'text', (column) => column.notNull())
    .addColumn('return_to', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('expires_at', 'bigint', (column) => column.notNull())
    .addColumn('used_at', 'bigint')
    .execute();
  await db.schema.createIndex('sso_logins_expiry').on('sso_logins').column('expires_at').execute();

  await db.schema.createTable('scim_users')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('user_name', 'text', (column) => column.notNull())
    .addColumn('external_id', 'text')
    .addColumn('display_name', 'text')
    .addColumn('active', 'integer', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addUniqueConstraint('scim_users_account_name', ['account_id', 'user_name'])
    .addUniqueConstraint('scim_users_account_user', ['account_id', 'user_id'])
    .execute();

  await db.schema.createTable('scim_groups')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('display_name', 'text', (column) => column.notNull())
    .addColumn('external_id', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .addUniqueConstraint('scim_groups_account_name', ['account_id', 'display_name'])
    .execute();

  await db.schema.createTable('scim_group_members')
    .addColumn('group_id', 'text', (column) => column.notNull())
    .addColumn('scim_user_id', 'text', (column) => column.notNull())
    .addPrimaryKeyConstraint('scim_group_members_pk', ['group_id', 'scim_user_id'])
    .execute();
  await db.schema.createIndex('scim_group_members_user').on('scim_group_members').column('scim_user_id').execute();

  await db.schema.alterTable('console_sessions').addColumn('sso_connection_id', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('console_sessions').dropColumn('sso_connection_id').execute();
  for (const table of ['scim_group_members', 'scim_groups', 'scim_users', 'sso_logins', 'sso_identities', 'sso_domains', 'sso_connections']) {
    await db.schema.dropTable(table).execute();
  }
}
