import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientFamily } from '../codecs/client-family.js';

export interface RequestContext {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
  readonly requestId: string;
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  /** Path parameters captured by the route pattern. */
  params: Record<string, string>;
  /** `performance.now()` when the request arrived, for latency. */
  readonly startedAt: number;
  readonly clientIp: string;
  /** The protocol family the caller speaks: its errors take this family's shape. */
  family: ClientFamily;
  /** Size of the request body once read as JSON (an upper bound of its tokens). */
  bodyBytes?: number;
}

export type RouteHandler = (context: RequestContext) => Promise<void>;
