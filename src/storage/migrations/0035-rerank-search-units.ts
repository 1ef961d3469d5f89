import type { Kysely } from 'kysely';

/**
 * Rerank models are billed per search unit: `models.per_search_unit_nano` is the operator's price of one (null:
 * unset). The model kind `rerank` needs no schema change (`kind` is free text checked by the application).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('models').addColumn('per_search_unit_nano', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('models').dropColumn('per_search_unit_nano').execute();
}
