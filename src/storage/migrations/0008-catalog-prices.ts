import { sql, type Kysely } from 'kysely';

/**
 * The default catalog now comes from a maintained package of model data, read at start, instead of model rows the
 * provider env shortcuts wrote.
 *
 * - `models.cache_write_per_mtok_nano`: prompt-cache writes get their own price (null: billed as input).
 * - Rows that earlier versions wrote for OPENAI_API_KEY / ANTHROPIC_API_KEY / GEMINI_API_KEY, still exactly as
 *   written (same hand-typed prices, never edited), are removed: left in place they would pin those prices for
 *   ever as if an operator had set them. A row an operator created or changed differs in some field and stays.
 */
const SHORTCUT_ROWS: ReadonlyArray<readonly [id: string, ownedBy: string, input: bigint, cached: bigint, output: bigint]> = [
  ['gpt-4o', 'openai', 2_500_000_000n, 1_250_000_000n, 10_000_000_000n],
  ['gpt-4o-mini', 'openai', 150_000_000n, 75_000_000n, 600_000_000n],
  ['gpt-4.1', 'openai', 2_000_000_000n, 500_000_000n, 8_000_000_000n],
  ['gpt-4.1-mini', 'openai', 400_000_000n, 100_000_000n, 1_600_000_000n],
  ['gpt-4.1-nano', 'openai', 100_000_000n, 25_000_000n, 400_000_000n],
  ['o4-mini', 'openai', 1_100_000_000n, 275_000_000n, 4_400_000_000n],
  ['claude-sonnet-4-5', 'anthropic', 3_000_000_000n, 300_000_000n, 15_000_000_000n],
  ['claude-haiku-4-5', 'anthropic', 1_000_000_000n, 100_000_000n, 5_000_000_000n],
  ['claude-opus-4-1', 'anthropic', 15_000_000_000n, 1_500_000_000n, 75_000_000_000n],
  ['gemini-2.5-pro', 'google', 1_250_000_000n, 310_000_000n, 10_000_000_000n],
  ['gemini-2.5-flash', 'google', 300_000_000n, 75_000_000n, 2_500_000_000n],
  ['gemini-2.5-flash-lite', 'google', 100_000_000n, 25_000_000n, 400_000_000n],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('models').addColumn('cache_write_per_mtok_nano', 'bigint').execute();
  for (const [id, ownedBy, input, cached, output] of SHORTCUT_ROWS) {
    await sql`DELETE FROM models WHERE id = ${id} AND owned_by = ${ownedBy} AND kind = 'chat' AND public = 1
      AND upstream IS NULL AND rpm IS NULL AND tpm IS NULL AND created_at = updated_at
      AND input_per_mtok_nano = ${input} AND cached_input_per_mtok_nano = ${cached} AND output_per_mtok_nano = ${output}
      AND per_request_nano IS NULL AND per_image_nano IS NULL AND per_audio_minute_nano IS NULL AND per_mchar_nano IS NULL`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('models').dropColumn('cache_write_per_mtok_nano').execute();
}
