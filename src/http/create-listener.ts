import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientIpResolver } from '../auth/client-ip.js';
import { GatewayError, toGatewayError } from '../errors/gateway-error.js';
import { discardRequestBody, lingerAfterAnswer } from '../multipart/drain-request.js';
import { describeError, type Logger } from '../shared/logger.js';
import { isPublicPath, type CorsPolicy } from './cors.js';
import type { ClientFamily } from '../codecs/client-family.js';
import { openAIFamily } from '../codecs/openai-chat/family.js';
import type { AdmissionControl } from './admission-control.js';
import { arrivingContext } from './arriving-request.js';
import type { RequestContext } from './request-context.js';
import { sendError } from './respond.js';
import type { Router } from './router.js';
import type { Telemetry } from '../telemetry/telemetry.js';

export interface ListenerOptions {
  router: Router;
  logger: Logger;
  clientIp: ClientIpResolver;
  /** Which protocol family a path belongs to (its errors answer in that family's shape); default OpenAI's. */
  familyOfPath?: (path: string) => ClientFamily;
  /** The browser policy (API listener): preflights and cross-origin reads of public endpoints. */
  cors?: CorsPolicy;
  /** Sheds requests beyond what the process can serve (API listener); probes, metrics and admin are never shed. */
  admission?: AdmissionControl;
  /** The access log and tracing of API requests (API listener). */
  telemetry?: Telemetry;
  /** Runs before routing; what it throws is the answer (the console's Host check). */
  beforeRoute?: (context: RequestContext) => void;
}

/**
 * The node:http request listener: request id on every response, routing, and one place where anything thrown
 * becomes the spec's error object. Unexpected errors are logged by class only (their text may hold secrets).
 */
export function createListener(options: ListenerOptions): (request: IncomingMessage, response: ServerResponse) => void {
  const { router, logger, clientIp } = options;
  const familyOfPath = options.familyOfPath ?? (() => openAIFamily);
  return (request, response) => {
    const startedAt = performance.now();
    const context = arrivingContext(request, response, clientIp(request), familyOfPath, startedAt);
    const { requestId, path } = context;
    const admission = options.admission !== undefined && !isNeverShed(path) ? options.admission : null;
    if (admission !== null && !admission.tryAdmit(startedAt)) {
      refuseOverloaded(context);
      return;
    }
    const observation = options.telemetry?.begin({ requestId, method: context.method, path, headers: request.headers, clientIp: context.clientIp, startedAt }) ?? null;
    // One listener for both: the slot goes back, and a caller that left before the head was sent is counted as nginx
    // does: 499.
    if (admission !== null || observation !== null) {
      response.once('close', () => {
        admission?.release();
        observation?.responseClosed(response.headersSent ? response.statusCode : 499);
      });
    }
    let handling: Promise<void>;
    try {
      options.beforeRoute?.(context);
      handling = dispatch(router, context, options.cors);
    } catch (error) {
      handling = Promise.reject(error);
    }
    handling.catch((thrown: unknown) => {
      const error = toGatewayError(thrown);
      if (observation !== null) observation.errorCode = error.code;
      if (error.code === 'internal_error') {
        logger.error('unhandled error', { requestId, method: context.method, path, ...describeError(thrown), stack: thrown instanceof Error ? thrown.stack?.split('\n').slice(1, 5).join(' | ') : undefined });
      }
      if (response.headersSent) {
        response.destroy();
        return;
      }
      answerAfterBody(context, error);
    });
  };
}

/**
 * Sends the error once the rest of the request body is read and dropped (within DRAIN_BEFORE_ANSWER_MS and _BYTES):
 * a refusal made before the body was read (a wrong key, a lockout, a body too large) would otherwise close or reset
 * the connection under a client still sending, which then sees EPIPE or ECONNRESET instead of the answer. Past the
 * budget, the answer closes the connection, lingering so the client can read it.
 */
function answerAfterBody(context: RequestContext, error: GatewayError): void {
  if (context.request.complete) {
    sendError(context, error);
    return;
  }
  void discardRequestBody(context.request).then((complete) => {
    if (context.response.destroyed) return;
    if (!complete) {
      context.response.setHeader('connection', 'close');
      lingerAfterAnswer(context.request);
    }
    sendError(context, error);
  });
}

/** Paths that answer whatever the load: probes, metrics and the operator's API. */
function isNeverShed(path: string): boolean {
  return path === '/healthz' || path === '/readyz' || path === '/metrics' || path.startsWith('/admin/');
}

/**
 * 503 `overloaded` with Retry-After, before the body is read or the key is looked at, and the connection closes after
 * it: a refused client's next request then needs a new connection, which waits in the kernel's accept queue (a
 * shedding process takes its new connections one per turn: http/accept-sockets.ts) instead of costing the process
 * another read, parse and answer on a connection it already holds. A body not yet read is read and dropped while the
 * connection closes, so the client sees the answer and not a reset.
 */
function refuseOverloaded(context: RequestContext): void {
  context.response.setHeader('connection', 'close');
  if (!context.request.complete) lingerAfterAnswer(context.request);
  sendError(context, new GatewayError('overloaded', 'The gateway is at capacity right now; nothing was charged. Retry after the time in Retry-After.', { retryAfterSeconds: 1 }));
}

function dispatch(router: Router, context: RequestContext, cors: CorsPolicy | undefined): Promise<void> {
  if (cors !== undefined) {
    if (context.method === 'OPTIONS') return cors.preflight(context);
    if (isPublicPath(context.path)) cors.allowAnyOrigin(context);
  }
  return routeRequest(router, context);
}

/** Runs the route `router` finds for the request, or answers 404, 405 or 400 (a malformed path) as every router does. */
export function routeRequest(router: Router, context: RequestContext): Promise<void> {
  const match = router.match(context.method, context.path);
  switch (match.kind) {
    case 'found':
      context.params = match.params;
      return match.handler(context);
    case 'method-not-allowed':
      context.response.setHeader('allow', match.allowed.join(', '));
      throw new GatewayError('method_not_allowed', `Method ${context.method} is not allowed on ${context.path}.`);
    case 'malformed-path':
      throw new GatewayError('bad_request', 'The request path contains a malformed percent-escape.');
    case 'not-found':
      throw new GatewayError('not_found', `No route for ${context.method} ${context.path}.`);
    default: {
      const unknown: never = match;
      throw new Error(`unhandled route match ${String(unknown)}`);
    }
  }
}
