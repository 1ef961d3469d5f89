import type { Kysely } from 'kysely';

/**
 * `models.routing_strategy`: how the model's channels within one priority tier are ordered (`weighted`,
 * `least-latency`, `least-in-flight`). Every existing model keeps today's weighted order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('models').addColumn('routing_strategy', 'text', (column) => column.notNull().defaultTo('weighted')).execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('models').dropColumn('routing_strategy').execute();
}
