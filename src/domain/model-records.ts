import type { NanoUsd } from './records.js';

// A model of the catalog as the gateway sees it: its kind, prices, limits, routing and cache policy.

export type ModelKind = 'chat' | 'embedding' | 'image' | 'audio' | 'moderation' | 'rerank';

/** How a model's channels within one priority tier are ordered (src/routing/balancing-strategy.ts). */
export type BalancingStrategy = 'weighted' | 'least-latency' | 'least-in-flight';

export interface Pricing {
  inputPerMtokNano: NanoUsd | null;
  outputPerMtokNano: NanoUsd | null;
  cachedInputPerMtokNano: NanoUsd | null;
  /** Prompt-cache writes; unset: billed at the input price. */
  cacheWritePerMtokNano: NanoUsd | null;
  perRequestNano: NanoUsd | null;
  perImageNano: NanoUsd | null;
  perAudioMinuteNano: NanoUsd | null;
  perMcharNano: NanoUsd | null;
  /** Each web search an answer ran (OpenAI's and Anthropic's searches, Gemini 3's search queries). */
  perWebSearchNano: NanoUsd | null;
  /** Once for a request whose answer searched the web at all (Gemini 2.x bills Google Search grounding per prompt). */
  perGroundedPromptNano: NanoUsd | null;
  /** Each web fetch (Anthropic's web fetch tool). */
  perWebFetchNano: NanoUsd | null;
  /** Each file search call (OpenAI's file_search tool). */
  perFileSearchNano: NanoUsd | null;
  /** Each search unit of a rerank request (one query over up to 100 documents; see billing/search-units.ts). */
  perSearchUnitNano: NanoUsd | null;
  /** Input and output per million tokens for lines of a batch; unset: the normal price (billing/batch-pricing.ts). */
  batchInputPerMtokNano: NanoUsd | null;
  batchOutputPerMtokNano: NanoUsd | null;
  /** Audio input tokens (realtime sessions); unset: billed at the input price. */
  inputAudioPerMtokNano?: NanoUsd | null;
  /** Cached audio input tokens; unset: billed at the audio input price. */
  cachedAudioInputPerMtokNano?: NanoUsd | null;
  /** Audio output tokens; unset: billed at the output price. */
  outputAudioPerMtokNano?: NanoUsd | null;
  /**
   * Per image by quality and size, keyed `<quality> <size>` (`hd 1024x1792`) or `<size>` alone (bundled catalog only:
   * DALL·E bills so); an image of a variant not listed costs `perImageNano`. An operator's `perImageNano` replaces it.
   */
  perImageBySize?: Readonly<Record<string, NanoUsd>>;
  /**
   * Long-context prices (bundled catalog only): once the request's input passes `aboveInputTokens`, every token of
   * it is billed at the tier's rates. Ascending by threshold; the last one passed applies.
   */
  tiers?: readonly PriceTier[];
}

/** A model with no price set. */
export const NO_PRICES: Pricing = {
  inputPerMtokNano: null, outputPerMtokNano: null, cachedInputPerMtokNano: null, cacheWritePerMtokNano: null, perRequestNano: null, perImageNano: null,
  perAudioMinuteNano: null, perMcharNano: null, perWebSearchNano: null, perGroundedPromptNano: null, perWebFetchNano: null, perFileSearchNano: null, perSearchUnitNano: null,
  batchInputPerMtokNano: null, batchOutputPerMtokNano: null,
};

export interface PriceTier {
  aboveInputTokens: number;
  inputPerMtokNano: NanoUsd | null;
  outputPerMtokNano: NanoUsd | null;
  cachedInputPerMtokNano: NanoUsd | null;
  cacheWritePerMtokNano: NanoUsd | null;
}

/**
 * A model's response cache: answers to identical requests are kept `ttlSeconds` and replayed without an upstream
 * call, billed `hitPriceBasisPoints` / 10,000 of the original answer's cost. Entries are per account unless `shared`.
 */
export interface ModelCachePolicy {
  ttlSeconds: number;
  hitPriceBasisPoints: number;
  shared: boolean;
}

export interface Model {
  id: string;
  kind: ModelKind;
  public: boolean;
  /** Default upstream model name when a channel lists this model without its own mapping. */
  upstream: string | null;
  ownedBy: string;
  pricing: Pricing;
  rpm: number | null;
  tpm: number | null;
  /** Orders the model's channels within a priority tier. */
  routingStrategy: BalancingStrategy;
  /** The response cache; null: only requests that ask for it (`x-gateway-cache: on`) are cached, with the defaults. */
  cache: ModelCachePolicy | null;
  /**
   * Models tried in this order when this one cannot answer a chat request (every channel failed, the request is
   * over its context window, or the upstream refused it on content policy); ids or aliases, each tried at most once.
   */
  fallbacks: readonly string[];
  createdAt: number;
  updatedAt: number;
}
