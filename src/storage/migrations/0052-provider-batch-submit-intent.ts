import type { Kysely } from 'kysely';

/**
 * `provider_batches.submit_started_at`: when a submit to the provider was first begun, written before the provider
 * is called. A batch still in `submit` with it set may exist upstream already (the instance stopped between the
 * provider's answer and recording its id); the provider is searched for it before the batch is submitted again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('provider_batches').addColumn('submit_started_at', 'bigint').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('provider_batches').dropColumn('submit_started_at').execute();
}
