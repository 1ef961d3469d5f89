import type { Kysely } from 'kysely';

/**
 * `guardrails.headers_sealed`: a webhook policy's headers (the credentials its guardrail service wants), as one
 * JSON object sealed with the gateway's secret box like channel keys; NULL when it has none.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('guardrails').addColumn('headers_sealed', 'text').execute();
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('guardrails').dropColumn('headers_sealed').execute();
}
