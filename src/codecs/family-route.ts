import type { IncomingHttpHeaders } from 'node:http';
import type { CatalogModel } from '../catalog/catalog-model.js';
import type { ChatRequest } from '../ir/chat-request.js';
import type { EmbeddingRequest, EmbeddingResponse } from '../ir/embedding.js';
import { hostedToolOfferOfChat, type HostedToolOffer } from '../ir/hosted-tool-offer.js';
import { needsOfChat, type RequestNeeds } from '../ir/request-needs.js';
import type { TokenCount } from '../ir/token-count.js';
import { estimateChatRequestTokens } from '../shared/estimate-tokens.js';
import type { KeptMembers } from '../wire/kept-members.js';
import type { ClientWire } from '../wire/wire.js';
import type { ClientCodec } from './client-codec.js';

/** What a family's route reads of the request besides its body: the path parameters and the query. */
export interface RouteRequest {
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
}

/** A request field only a channel serving the caller's wire natively (pass-through) can honour. */
export interface NativeOnlyField {
  param: string;
  message: string;
}

/** What the gateway reads from a chat request before routing it, validated. */
export interface ChatEnvelope {
  /** How the caller's family reads and writes this request, bound to the stream framing the caller asked for. */
  codec: ClientCodec;
  model: string;
  stream: boolean;
  maxOutputTokens: number | null;
  promptTokensEstimate: number;
  /** Tools, images, JSON schema: routing sends the request only to channels whose model offers them. */
  needs: RequestNeeds;
  /** Tools the upstream runs and bills per call that the request offers (money is held for them). */
  hostedTools: HostedToolOffer;
  /** The canonical request, decoded now or on first use. */
  chat: () => ChatRequest;
  /** False when an answer may depend on more than the request (state stored upstream): never cached. */
  cacheable?: boolean;
  /** The first field that only pass-through channels can serve: the others are left out (a 400 naming it when none are left). */
  nativeOnly?: NativeOnlyField | null;
}

/** The chat operation of one route: its usage-log label, its wire and how it reads the envelope. */
export interface ChatEndpoint {
  /** Usage-log label, e.g. `anthropic-messages`. */
  protocol: string;
  /** The caller's wire (which gateway fields its body carries). */
  wire: ClientWire;
  /**
   * `added`: top-level body fields the gateway put in (the header-named end customer as `user`); a codec whose
   * answers echo request fields echoes the caller's body without them. `bytes`: the caller's own bytes while the
   * body is still what they say (else null), for what is cheaper read off them (`topLevelIndex`). `scope`: the
   * caller's account, to which anything kept from its bytes for later requests is bound.
   */
  readEnvelope(request: RouteRequest, body: Record<string, unknown>, added: ReadonlySet<string>, bytes: Buffer | null, scope: string): ChatEnvelope;
  /**
   * Top-level members of this family's bodies kept parsed by their bytes (those an agent sends again unchanged each
   * turn, such as its tools): the reader reuses them instead of parsing them again. Their values are frozen, so
   * nothing downstream may change them in place. Absent: every body is parsed whole.
   */
  keptMembers?: KeptMembers;
}

/**
 * What a count request asks for: the model and the canonical request, or, for a request that needs the upstream's
 * own state (e.g. `previous_response_id`), no canonical request and the field that needs it: then only pass-through
 * channels can count it and there is no local count.
 */
export type CountTokensRequest = { model: string; chat: ChatRequest } | { model: string; chat: null; nativeOnly: NativeOnlyField };

/** The token-count operation of one route (never billed). */
export interface CountTokensEndpoint {
  /** The caller's wire: channels that take its bodies as they came count the caller's body themselves. */
  wire: ClientWire;
  /** Caller headers a same-protocol upstream should see (Anthropic's version and betas). */
  passThroughHeaders?: readonly string[];
  decode(request: RouteRequest, body: Record<string, unknown>): CountTokensRequest;
  encode(count: TokenCount): string;
}

/** The embeddings operation of one route. */
export interface EmbeddingsEndpoint {
  /** The caller's wire: channels that take its bodies as they came get the caller's body. */
  wire: ClientWire;
  /** Usage-log label, e.g. `openai-embeddings`. */
  label: string;
  batch: boolean;
  decode(request: RouteRequest, body: Record<string, unknown>): { request: EmbeddingRequest; encode: (response: EmbeddingResponse) => string };
  /** The field of an answer that holds its usage, for the request's cost spliced in (null: the header only). */
  usageKey: string | null;
  /** Input tokens an upstream answer in this protocol reports, if it does. */
  reportedTokens(body: Buffer): number | null;
}

/** How a family's clients read the model list and one model. */
export interface ModelListing {
  /**
   * Recognises this family's clients on the model paths of a family whose listing recognises no one (OpenAI's
   * `/v1/models`, which every SDK calls), by what their SDK always sends.
   */
  recognises?(headers: IncomingHttpHeaders, query: URLSearchParams): boolean;
  /** The models the caller may see, sorted by id; the listing orders and pages them as its clients expect. */
  encodeList(models: readonly CatalogModel[], query: URLSearchParams): string;
  /** One model, under the id the caller asked for. */
  encodeModel(model: CatalogModel, askedId: string): string;
}

/**
 * One route of a family, as data: the HTTP layer mounts it and runs the named operation with the parts given here.
 * `endpoint` is the route's metric label.
 */
export type FamilyRoute = {
  method: 'GET' | 'POST' | 'DELETE';
  /** A path (`:name` segments are parameters) or a pattern with named groups. */
  path: string | RegExp;
  /**
   * A pattern's path templates for traces (`/v1beta/models/{model}:countTokens`), one per literal prefix it allows:
   * a path takes the first whose text before its first `{` begins it. A string path is its own template.
   */
  templates?: readonly string[];
  endpoint: string;
} & (
  | { operation: 'chat'; chat: ChatEndpoint }
  | { operation: 'countTokens'; countTokens: CountTokensEndpoint }
  | { operation: 'embeddings'; embeddings: EmbeddingsEndpoint }
  /** The family's model list and model lookup, in its `models` listing. */
  | { operation: 'listModels' | 'getModel' }
);

/**
 * The envelope of a chat request decoded into the canonical request up front. `toolsJsonBytes`: the length of the
 * caller's tools as they wrote them, when known (`estimateChatRequestTokens`).
 */
export function decodedChatEnvelope(codec: ClientCodec, chat: ChatRequest, stream: boolean, toolsJsonBytes?: number): ChatEnvelope {
  return {
    codec,
    model: chat.model,
    stream,
    maxOutputTokens: chat.maxOutputTokens ?? null,
    promptTokensEstimate: estimateChatRequestTokens(chat, toolsJsonBytes),
    needs: needsOfChat(chat),
    hostedTools: hostedToolOfferOfChat(chat),
    chat: () => chat,
  };
}

/** Memoises a decode so the canonical request is built at most once, and only when needed. */
export function once<T>(build: () => T): () => T {
  let value: { built: T } | null = null;
  return () => (value ??= { built: build() }).built;
}
