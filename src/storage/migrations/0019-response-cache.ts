import type { Kysely } from 'kysely';

/**
 * The response cache. On `models`: `cache_ttl_seconds` (null: the model does not cache unless a request asks),
 * `cache_hit_price_bp` (what a hit costs, in basis points of the original answer's cost; 0: free) and
 * `cache_shared` (0/1: hits cross accounts). On `usage_logs`: `cache_hit` (0/1), a row answered from the cache.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('models').addColumn('cache_ttl_seconds', 'integer').execute();
  await db.schema.alterTable('models').addColumn('cache_hit_price_bp', 'integer', (column) => column.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('models').addColumn('cache_shared', 'integer', (column) => column.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('usage_logs').addColumn('cache_hit', 'integer', (column) => column.notNull().defaultTo(0)).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('usage_logs').dropColumn('cache_hit').execute();
  await db.schema.alterTable('models').dropColumn('cache_shared').execute();
  await db.schema.alterTable('models').dropColumn('cache_hit_price_bp').execute();
  await db.schema.alterTable('models').dropColumn('cache_ttl_seconds').execute();
}
