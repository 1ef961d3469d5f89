import type { Kysely } from 'kysely';

/**
 * `models.fallback_models`: a JSON array of the model ids tried, in order, when the model cannot answer a chat
 * request. Every existing model has none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('models').addColumn('fallback_models', 'text', (column) => column.notNull().defaultTo('[]')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('models').dropColumn('fallback_models').execute();
}
