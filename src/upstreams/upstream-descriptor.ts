import type { Clock } from '../shared/clock.js';
import type { ChannelForm } from './channel-form.js';
import type { UpstreamAdapter, UpstreamTransport } from './upstream-adapter.js';
import type { PassThroughOperationKind, Wire } from '../wire/wire.js';

/** What an adapter is built with: the HTTP transport (real providers) and the clock (token caches, the simulator). */
export interface UpstreamDependencies {
  http: UpstreamTransport;
  clock: Clock;
}

/** Media operations, by the kind of answer the caller asked for. */
export type MediaKind = 'image-generation' | 'image-edits' | 'image-variations' | 'transcriptions' | 'translations' | 'speech' | 'moderations';

/**
 * What an upstream serves, as data: every upstream serves chat; the rest is declared here and matches the optional
 * parts of its adapter (a count-tokens counter, embeddings, media).
 */
export interface UpstreamCapabilities {
  streaming: boolean;
  /** `upstream`: canonical requests are counted by the provider's own counter; `local`: by the gateway's tokenizer. */
  countTokens: 'upstream' | 'local';
  embeddings: boolean;
  /** Reranking (`POST /v1/rerank`); absent: none. */
  rerank?: boolean;
  media: readonly MediaKind[];
  /** Operations of its wire that take the caller's body unchanged (on some or all of its channels). */
  passThrough: readonly PassThroughOperationKind[];
}

/** Where a channel type's models and list prices come from in the bundled catalog data. */
export interface BundledCatalogSource {
  /** Provider id in the bundled data. */
  provider: string;
  /** The provider's models this type serves, when not all (the data's `google` also lists Vertex-only models). */
  serves?: RegExp;
}

/**
 * One upstream type: the channel types it owns, the wire it speaks, what it serves, and how its adapter is made.
 * Each lives in `src/upstreams/<name>/index.ts` and is listed once in `upstreams.ts`.
 */
export interface UpstreamDescriptor<Type extends string = string> {
  readonly channelTypes: readonly Type[];
  /** The wire its adapter speaks (the same object as the adapter's `wire`). */
  readonly wire: Wire;
  readonly capabilities: UpstreamCapabilities;
  /** The bundled catalog provider of each channel type that has one (a channel may name another in its settings). */
  readonly catalog?: { readonly [T in Type]?: BundledCatalogSource };
  /** What the console's channel form asks for each type (absent: an API key and an optional base URL). */
  readonly form?: { readonly [T in Type]?: ChannelForm };
  createAdapter(dependencies: UpstreamDependencies): UpstreamAdapter;
}

/** Keeps the descriptor's channel type names as literal types, so `ChannelType` is derived from the registry. */
export function defineUpstream<const Type extends string>(descriptor: UpstreamDescriptor<Type>): UpstreamDescriptor<Type> {
  return descriptor;
}
