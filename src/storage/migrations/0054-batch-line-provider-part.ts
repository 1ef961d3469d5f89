import { sql, type Kysely } from 'kysely';

/**
 * `batch_lines.via_provider`: 1 for a line in the part of its batch that a provider's own batch API runs, 0 for a
 * line the gateway's queue runs. A batch can be split: the lines one provider's batch API can take go there, the
 * others run on the queue, under one batch id and one hold. Lines of batches sent wholly to a provider before this
 * column existed are all in the provider's part.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('batch_lines').addColumn('via_provider', 'bigint', (column) => column.notNull().defaultTo(0)).execute();
  await sql`update "batch_lines" set "via_provider" = 1 where "batch_id" in (select "batch_id" from "provider_batches")`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('batch_lines').dropColumn('via_provider').execute();
}
