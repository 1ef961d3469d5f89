import type { IncomingMessage, ServerResponse } from 'node:http';

/** Which protocol family's error shape the caller expects. */
export type ErrorFormat = 'openai' | 'anthropic' | 'gemini';

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
  errorFormat: ErrorFormat;
  /** Size of the request body once read as JSON (an upper bound of its tokens). */
  bodyBytes?: number;
}

export type RouteHandler = (context: RequestContext) => Promise<void>;
