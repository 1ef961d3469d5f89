import type { Kysely } from 'kysely';

/**
 * Hosted tools the upstream bills per call. On `models`: the operator's prices per web search, per grounded prompt
 * (once for a request that searched), per web fetch and per file search (null: unset). On `usage_logs`: the calls an
 * answer made and what they cost (`hosted_tool_cost_nano`, part of `cost_nano`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of ['per_web_search_nano', 'per_grounded_prompt_nano', 'per_web_fetch_nano', 'per_file_search_nano']) {
    await db.schema.alterTable('models').addColumn(column, 'bigint').execute();
  }
  for (const column of ['web_searches', 'web_fetches', 'file_searches']) {
    await db.schema.alterTable('usage_logs').addColumn(column, 'integer', (definition) => definition.notNull().defaultTo(0)).execute();
  }
  await db.schema.alterTable('usage_logs').addColumn('hosted_tool_cost_nano', 'bigint', (definition) => definition.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['hosted_tool_cost_nano', 'file_searches', 'web_fetches', 'web_searches']) await db.schema.alterTable('usage_logs').dropColumn(column).execute();
  for (const column of ['per_file_search_nano', 'per_web_fetch_nano', 'per_grounded_prompt_nano', 'per_web_search_nano']) await db.schema.alterTable('models').dropColumn(column).execute();
}
