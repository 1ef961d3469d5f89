import type { Kysely } from 'kysely';

/**
 * Realtime sessions bill audio tokens at their own prices: per million audio input tokens, cached audio input tokens
 * and audio output tokens (null: unset, billed at the text token prices).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const column of ['input_audio_per_mtok_nano', 'cached_audio_input_per_mtok_nano', 'output_audio_per_mtok_nano']) {
    await db.schema.alterTable('models').addColumn(column, 'bigint').execute();
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of ['input_audio_per_mtok_nano', 'cached_audio_input_per_mtok_nano', 'output_audio_per_mtok_nano']) {
    await db.schema.alterTable('models').dropColumn(column).execute();
  }
}
