import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayError } from '../errors/gateway-error.js';
import type { LimitState } from '../limits/rate-limiter.js';
import type { FamilyRoute, ModelListing } from './family-route.js';

/** The tightest request window and the tightest token window a request was admitted under (null: none). */
export interface AdmittedLimits {
  requests: LimitState | null;
  tokens: LimitState | null;
}

/**
 * One client protocol family as its clients see the gateway: its routes, which paths are its own, how its clients
 * send the key, how its errors, rate-limit headers and model list look. A codec is a wire any family may reuse (it
 * knows no family); the HTTP layer asks the request's family instead of branching on the family's name. A new family is a codec folder with one of these
 * and one line in `families.ts`.
 */
export interface ClientFamily {
  /** The family's label in metrics (`protocol="openai"`) and in key refusals. */
  readonly name: string;
  /** The family's API routes, as data: the HTTP layer mounts them in this order and runs their operations. */
  readonly routes: readonly FamilyRoute[];
  /** How its clients read the model list (on its own model routes, or recognised on OpenAI's). */
  readonly models: ModelListing;
  /** True when a request path belongs to this family, so that its errors answer in this family's shape. */
  ownsPath(path: string): boolean;
  /** The caller's key, as this family's clients send it; null when none is present. */
  readApiKey(headers: IncomingHttpHeaders, query: URLSearchParams): string | null;
  /** Tells the family's clients how to send the key, in the refusal of a missing or malformed one. */
  readonly keyHint: string;
  /** The family's error body (JSON text) for a gateway error, readable by its official SDK. */
  encodeError(error: GatewayError): string;
  /** Adds the family's own rate-limit headers (where its clients read one) to the generic X-RateLimit set. */
  addRateLimitHeaders(headers: Record<string, string>, limits: AdmittedLimits, now: number): void;
}
