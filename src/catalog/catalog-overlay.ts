/**
 * What the bundled price data (@pydantic/genai-prices) does not carry, from the providers' own pricing pages: models
 * it lacks (priced per character or per image), prices it leaves out (per search, per image by size and quality) and
 * limits the family rules of model-traits.ts get wrong. Each entry names its source. An entry only fills what the data
 * lacks, so the data wins the day it carries the same fact; test/unit/catalog/catalog-overlay.test.ts fails then, so
 * the entry is removed rather than left to rot.
 *
 * Prices are in USD, named as the admin API names them: `per_mchar` per million characters, `per_image` and
 * `per_image_by_size` per image (keys `<quality> <size>`, or `<size>` for models without qualities), the hosted tool
 * prices per call, `per_grounded_prompt` once for a request whose answer searched.
 */
export interface OverlayPrices {
  per_mchar?: number;
  per_image?: number;
  per_image_by_size?: Readonly<Record<string, number>>;
  per_web_search?: number;
  per_grounded_prompt?: number;
  per_web_fetch?: number;
  per_file_search?: number;
}

/** A model the data does not have; its kind, modalities and the like come from the family rules. */
export interface OverlayModel {
  provider: string;
  add: string;
  /** Other ids the provider answers to for it (dated snapshots). */
  aliases?: readonly string[];
  prices: OverlayPrices;
  source: string;
}

/** Facts filled in for models the data has: one id, or every model of a kind whose id matches a pattern. */
export interface OverlayFill {
  provider: string;
  models: string | RegExp;
  /** With a pattern: only models of this kind. */
  kind?: 'chat';
  prices?: OverlayPrices;
  contextWindow?: number;
  source: string;
}

export type OverlayEntry = OverlayModel | OverlayFill;

const OPENAI_PRICING = 'https://platform.openai.com/docs/pricing';
const GEMINI_PRICING = 'https://ai.google.dev/gemini-api/docs/pricing';

export const CATALOG_OVERLAY: readonly OverlayEntry[] = [
  { provider: 'openai', add: 'tts-1', aliases: ['tts-1-1106'], prices: { per_mchar: 15 }, source: `${OPENAI_PRICING}#other-models` },
  { provider: 'openai', add: 'tts-1-hd', aliases: ['tts-1-hd-1106'], prices: { per_mchar: 30 }, source: `${OPENAI_PRICING}#other-models` },
  {
    provider: 'openai',
    add: 'dall-e-3',
    prices: {
      per_image_by_size: {
        'standard 1024x1024': 0.04, 'standard 1024x1792': 0.08, 'standard 1792x1024': 0.08,
        'hd 1024x1024': 0.08, 'hd 1024x1792': 0.12, 'hd 1792x1024': 0.12,
      },
    },
    source: `${OPENAI_PRICING}#image-generation`,
  },
  { provider: 'openai', add: 'dall-e-2', prices: { per_image_by_size: { '256x256': 0.016, '512x512': 0.018, '1024x1024': 0.02 } }, source: `${OPENAI_PRICING}#image-generation` },
  // Chat Completions' search model searches on every request: "Web search preview (non-reasoning models)".
  { provider: 'openai', models: 'gpt-4o-search-preview', prices: { per_web_search: 0.025 }, source: `${OPENAI_PRICING}#built-in-tools` },
  // Grounding with Google Search: Gemini 3 bills each search query, older models each grounded prompt.
  { provider: 'google', models: /^gemini-3(\.\d+)?-/, kind: 'chat', prices: { per_web_search: 0.014 }, source: GEMINI_PRICING },
  { provider: 'google', models: /^gemini-(1\.5|2\.0|2\.5)-|^gemini-(flash|pro)-1\.5/, kind: 'chat', prices: { per_grounded_prompt: 0.035 }, source: GEMINI_PRICING },
  // The family rule gives every Gemini model a million tokens; the embedding model takes 2,048.
  { provider: 'google', models: 'gemini-embedding-001', contextWindow: 2048, source: 'https://ai.google.dev/gemini-api/docs/embeddings#model-versions' },
];

export function isOverlayModel(entry: OverlayEntry): entry is OverlayModel {
  return 'add' in entry;
}

/** Whether a fill entry covers the model `id` of `kind`. */
export function fillCovers(entry: OverlayFill, id: string, kind: string): boolean {
  if (typeof entry.models === 'string') return entry.models === id;
  return entry.models.test(id) && (entry.kind === undefined || entry.kind === kind);
}
