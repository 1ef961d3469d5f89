import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientIpResolver } from '../auth/client-ip.js';
import { GatewayError, toGatewayError } from '../errors/gateway-error.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { Counter, CounterSeries, GaugeSeries, HistogramSeries } from '../metrics/metrics-registry.js';
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

/** The bounded labels of a request in the request metrics: its route's protocol family and endpoint. */
export interface MetricLabels {
  readonly protocol: string;
  readonly endpoint: string;
}

/** The request metrics of a listener's answers (API listener). */
export interface ListenerMetrics {
  metrics: GatewayMetrics;
  /** The labels of a path, from the route table (handed in by the root): one object per route, whose series are resolved once. */
  routeLabels: (path: string) => MetricLabels;
}

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
  /**
   * `requests_total`, `request_duration_seconds`, `admission_latency_seconds` and `in_flight_requests`, recorded when
   * the response closes (API listener).
   */
  metrics?: ListenerMetrics;
  /** Runs before routing; what it throws is the answer (the console's Host check). */
  beforeRoute?: (context: RequestContext) => void;
}

/** The request listener, with the answers it has begun and not yet closed: a graceful stop waits for exactly those. */
export interface FrameListener {
  (request: IncomingMessage, response: ServerResponse): void;
  readonly answers: ReadonlySet<ServerResponse>;
}

/**
 * The node:http request listener, one frame per request: request id on every response, admission, routing, and one
 * place where anything thrown becomes the spec's error object. Unexpected errors are logged by class only (their text
 * may hold secrets). One `close` listener per response ends everything the request began: the answer leaves the set
 * in flight, the admission slot goes back, the request metrics and the observation get its status, and a caller that
 * left before the answer finished is told to the relay (`context.callerGone`).
 */
export function createListener(options: ListenerOptions): FrameListener {
  const { router, logger, clientIp, telemetry } = options;
  const familyOfPath = options.familyOfPath === undefined ? () => openAIFamily : rememberedPerPath(options.familyOfPath);
  const metrics = options.metrics === undefined ? null : new RequestMetrics(options.metrics);
  const answers = new Set<ServerResponse>();
  const listener = (request: IncomingMessage, response: ServerResponse): void => {
    const startedAt = performance.now();
    const context = arrivingContext(request, response, clientIp(request), familyOfPath, startedAt);
    const { requestId, path } = context;
    answers.add(response);
    // The request metrics are written out here, not called: a route's series are resolved on its first request only.
    let route: RouteSeries | null = null;
    if (metrics !== null) {
      metrics.inFlight.inc();
      const labels = metrics.routeLabels(path);
      route = metrics.routes.get(labels) ?? metrics.resolve(labels);
    }
    const admission = options.admission !== undefined && !isNeverShed(path) ? options.admission : null;
    const admitted = admission === null || admission.tryAdmit(startedAt);
    response.once('close', () => {
      answers.delete(response);
      if (metrics !== null && route !== null) {
        // An answer that did not finish is counted as 499, as nginx does (the access log's 499: one whose head was not sent).
        const status = response.writableFinished ? response.statusCode : 499;
        const seconds = (performance.now() - startedAt) / 1000;
        metrics.inFlight.dec();
        (route.byStatus.get(status) ?? route.count(status)).inc();
        route.duration.observe(seconds);
        (status === 503 ? metrics.refused : metrics.admitted).observe(seconds);
      }
      if (admitted) admission?.release();
      context.observation?.responseClosed(response.headersSent ? response.statusCode : 499);
      if (!response.writableFinished) context.callerGone.abort(new Error('client disconnected'));
    });
    if (!admitted) {
      refuseOverloaded(context);
      return;
    }
    const observation = telemetry?.begin({ requestId, method: context.method, path, headers: request.headers, clientIp: context.clientIp, startedAt }) ?? null;
    context.observation = observation;
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
  return Object.assign(listener, { answers: answers as ReadonlySet<ServerResponse> });
}

/** Paths whose family is remembered at most; when full, the memory starts over, so junk paths cannot grow it. */
const REMEMBERED_PATHS = 1024;
/** Longer paths (no route's) are asked each time, so the memory stays small. */
const REMEMBERED_PATH_LENGTH = 200;

/** `familyOfPath`, remembered per exact path: a request then costs one map lookup instead of asking every family. */
function rememberedPerPath(familyOfPath: (path: string) => ClientFamily): (path: string) => ClientFamily {
  const known = new Map<string, ClientFamily>();
  return (path) => {
    let family = known.get(path);
    if (family !== undefined) return family;
    family = familyOfPath(path);
    if (path.length <= REMEMBERED_PATH_LENGTH) {
      if (known.size >= REMEMBERED_PATHS) known.clear();
      known.set(path, family);
    }
    return family;
  };
}

/** One route's series of the request metrics: its duration, and its count by status (each status's found once). */
class RouteSeries {
  readonly byStatus = new Map<number, CounterSeries>();

  constructor(
    private readonly requests: Counter,
    private readonly labels: MetricLabels,
    readonly duration: HistogramSeries,
  ) {}

  /** The count of the route's answers with `status`, found and kept at its first answer. */
  count(status: number): CounterSeries {
    const series = this.requests.labels(this.labels.protocol, this.labels.endpoint, status);
    this.byStatus.set(status, series);
    return series;
  }
}

/**
 * The request metrics of a listener: in flight from arrival to close, then each answer's count, duration and
 * admission latency. Series are resolved once per route's labels object (and status), not looked up by label values
 * per answer.
 */
class RequestMetrics {
  readonly inFlight: GaugeSeries;
  readonly routeLabels: (path: string) => MetricLabels;
  readonly routes = new WeakMap<MetricLabels, RouteSeries>();
  /** `admission_latency_seconds` of the answers refused (503) and of every other. */
  readonly refused: HistogramSeries;
  readonly admitted: HistogramSeries;
  readonly #metrics: GatewayMetrics;

  constructor({ metrics, routeLabels }: ListenerMetrics) {
    this.#metrics = metrics;
    this.inFlight = metrics.inFlight;
    this.routeLabels = routeLabels;
    this.refused = metrics.admissionLatency.labels('refused');
    this.admitted = metrics.admissionLatency.labels('admitted');
  }

  /** The series of a route's labels, resolved at its first request. */
  resolve(labels: MetricLabels): RouteSeries {
    const route = new RouteSeries(this.#metrics.requests, labels, this.#metrics.requestDuration.labels(labels.protocol, labels.endpoint));
    this.routes.set(labels, route);
    return route;
  }
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
