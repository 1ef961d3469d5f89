import type { Kysely } from 'kysely';

/**
 * Projects inside an account (project-schema.ts):
 *
 * - `projects`: a named group of an account's keys with its own quota cap (`quota_nano`, `spent_nano` counting every
 *   charge of its keys), period budget (`budget_*`, all null or all set, as on keys), RPM/TPM limits and model
 *   allowlist (JSON array or NULL for every model).
 * - `project_members`: console users given a role scoped to one project (they see only its keys and usage).
 * - `api_keys.project_id`: the key's project; NULL is the account's default project, which has no limits of its own,
 *   so accounts that never make a project see no change.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createTable('projects')
    .addColumn('id', 'text', (column) => column.primaryKey())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('name', 'text', (column) => column.notNull())
    .addColumn('quota_nano', 'bigint')
    .addColumn('spent_nano', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('budget_period', 'text')
    .addColumn('budget_limit_nano', 'bigint')
    .addColumn('budget_spent_nano', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('budget_period_start', 'bigint', (column) => column.notNull().defaultTo(0))
    .addColumn('rpm', 'bigint')
    .addColumn('tpm', 'bigint')
    .addColumn('allowed_models', 'text')
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addColumn('updated_at', 'bigint', (column) => column.notNull())
    .execute();
  await db.schema.createIndex('projects_account').on('projects').columns(['account_id', 'id']).execute();

  await db.schema.createTable('project_members')
    .addColumn('project_id', 'text', (column) => column.notNull())
    .addColumn('account_id', 'text', (column) => column.notNull())
    .addColumn('user_id', 'text', (column) => column.notNull())
    .addColumn('role', 'text', (column) => column.notNull())
    .addColumn('created_at', 'bigint', (column) => column.notNull())
    .addPrimaryKeyConstraint('project_members_pk', ['project_id', 'user_id'])
    .execute();
  await db.schema.createIndex('project_members_account_user').on('project_members').columns(['account_id', 'user_id']).execute();

  await db.schema.alterTable('api_keys').addColumn('project_id', 'text').execute();
  await db.schema.createIndex('api_keys_project').on('api_keys').columns(['project_id']).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.dropIndex('api_keys_project').execute();
  await db.schema.alterTable('api_keys').dropColumn('project_id').execute();
  await db.schema.dropTable('project_members').execute();
  await db.schema.dropTable('projects').execute();
}
