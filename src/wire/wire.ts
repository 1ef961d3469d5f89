/**
 * A wire is an object: what it can carry as the caller sent it (its pass-through operations, each with its endpoint),
 * how a caller's body is made ready for an upstream of the same wire, and how its answers name their model. Each lives
 * in `wire/<family>/wire.ts`; codecs (the client side) and upstream adapters (the provider side) hold the same object,
 * and the relay asks it instead of switching on wire names.
 */

/**
 * The operations an upstream can be sent a caller's body with unchanged, by name, with what each carries. Adding one
 * here makes the compiler ask every wire (its `passThrough` record) to answer for it; a new route operation
 * (`RouteOperation`) likewise asks every client wire (`passThroughRoutes`).
 */
export interface PassThroughOperations {
  chat: { stream: boolean };
  'count-tokens': Record<never, never>;
  embeddings: { batch: boolean };
  /** OpenAI's Responses API (`POST /responses`), on the channels whose adapter says it serves it. */
  responses: { stream: boolean };
  /** The Responses API's token counter (`POST /responses/input_tokens`), on the same channels. */
  'responses-input-tokens': Record<never, never>;
}

export type PassThroughOperationKind = keyof PassThroughOperations;

/** One pass-through operation with what it carries, e.g. `{ kind: 'chat', stream: true }`. */
export type UpstreamOperation = { [Kind in PassThroughOperationKind]: { kind: Kind } & PassThroughOperations[Kind] }[PassThroughOperationKind];

export type OperationOf<Kind extends PassThroughOperationKind> = Extract<UpstreamOperation, { kind: Kind }>;

/**
 * Each pass-through operation's endpoint on a wire (a path, a method name: whatever the wire's adapters build URLs
 * from), or null where the wire has none. Every operation must be answered, so a new one is a compile error until
 * each wire says whether it has it.
 */
export type PassThroughEndpoints<Endpoint> = { readonly [Kind in PassThroughOperationKind]: ((operation: OperationOf<Kind>) => Endpoint) | null };

/**
 * An upstream's wire: its name (`openai-chat`, `bedrock-converse` …; a wire no client wire is served on, such as
 * Bedrock's, takes every request translated) and the endpoint of each operation it takes as the caller sent it.
 */
export interface Wire<Endpoint = unknown> {
  readonly name: string;
  readonly passThrough: PassThroughEndpoints<Endpoint>;
}

/** The operation a caller's route asks for, before its wire names the upstream operation it is sent as. */
export type RouteOperation = { kind: 'chat'; stream: boolean } | { kind: 'count-tokens' } | { kind: 'embeddings'; batch: boolean };

/**
 * The upstream operation each route operation of a client wire is sent as on an upstream that serves the wire, or
 * null where such a request is always translated. Every route operation must be answered.
 */
export type PassThroughRoutes = { readonly [Kind in RouteOperation['kind']]: ((operation: Extract<RouteOperation, { kind: Kind }>) => UpstreamOperation) | null };

/** A wire clients speak (a codec's), and what it takes to send a caller's body to an upstream as it came. */
export interface ClientWire {
  /** `openai-chat`, `openai-responses`, `anthropic-messages`, `gemini` … */
  readonly name: string;
  /** The wire of the upstreams that take this wire's requests as they came: its own, or OpenAI's for the Responses API. */
  readonly servedOn: Wire;
  /** The upstream operation a route's request is sent as on such an upstream. */
  readonly passThroughRoutes: PassThroughRoutes;
  /**
   * The caller's body for such an upstream: the model name swapped (where the body carries it), and whatever else
   * the wire needs (OpenAI's usage chunk asked for on a stream, reasoning state the gateway made for another provider
   * left out). `bytes`, the caller's own bytes while the body object is still what they say (else null), are sent
   * as they came when none of that changes anything; otherwise the body is written again as JSON text.
   */
  passThroughBody(body: Record<string, unknown>, upstreamModel: string, stream: boolean, bytes: Buffer | null): string | Buffer;
  /** The field of a complete answer that names the model which answered (`model`, Gemini's `modelVersion`). */
  readonly answerModelField: string;
  /**
   * The gateway's own fields a body of this wire has room for, taken out before any upstream sees it; callers of
   * other wires send them as headers.
   */
  readonly gatewayFields: readonly GatewayField[];
}

/** A gateway field a caller's body may carry: its fallback `models`, its `provider` preference. */
export type GatewayField = 'models' | 'provider';

/** The endpoint of `operation` on `wire`; asked only for operations the wire has (`chooseWire` checks first). */
export function passThroughEndpoint<Endpoint>(wire: Wire<Endpoint>, operation: UpstreamOperation): Endpoint {
  const endpoint = wire.passThrough[operation.kind] as ((operation: UpstreamOperation) => Endpoint) | null;
  if (endpoint === null) throw new Error(`the ${wire.name} wire has no ${operation.kind} endpoint`);
  return endpoint(operation);
}

/** The upstream operation `route` is sent as on an upstream serving `wire`; null: always translated. */
export function passThroughOperationOf(wire: ClientWire, route: RouteOperation): UpstreamOperation | null {
  const operation = wire.passThroughRoutes[route.kind] as ((operation: RouteOperation) => UpstreamOperation) | null;
  return operation === null ? null : operation(route);
}

/** Whether `wire` has an endpoint for `operation`. */
export function wireCarries(wire: Wire, operation: UpstreamOperation): boolean {
  return wire.passThrough[operation.kind] !== null;
}

/** A client wire's route operations sent as the same operations on its own upstreams. */
export const SAME_ROUTES = {
  chat: (operation: { stream: boolean }): UpstreamOperation => ({ kind: 'chat', stream: operation.stream }),
  countTokens: (): UpstreamOperation => ({ kind: 'count-tokens' }),
  embeddings: (operation: { batch: boolean }): UpstreamOperation => ({ kind: 'embeddings', batch: operation.batch }),
} as const;

/** The record of a wire that takes no caller's body as it came (an upstream-only wire). */
export const NO_PASS_THROUGH: PassThroughEndpoints<never> = {
  chat: null,
  'count-tokens': null,
  embeddings: null,
  responses: null,
  'responses-input-tokens': null,
};
