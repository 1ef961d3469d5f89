import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket } from 'ws';
import { WebSocketServer } from 'ws';
import { settle } from '../billing/settle.js';
import type { RealtimeConfig } from '../config/realtime-config.js';
import type { Account, ApiKey } from '../domain/records.js';
import { GatewayError, toGatewayError } from '../errors/gateway-error.js';
import { authenticate } from '../http/authenticate.js';
import type { RequestContext } from '../http/request-context.js';
import { sendError } from '../http/respond.js';
import { noChannel, resolveModel } from '../operations/resolve-model.js';
import { admit, type Admission } from '../relay/admission.js';
import { relayDependencies, type RelayDependencies } from '../relay/relay-dependencies.js';
import { RequestMeter } from '../relay/request-meter.js';
import { UpstreamAttempt } from '../relay/upstream-attempt.js';
import { exhaustedError, type FailedAttempt } from '../relay/upstream-call.js';
import { callerErrorFromUpstream } from '../relay/upstream-error.js';
import { DEFAULT_OUTPUT_TOKENS_RESERVED } from '../billing/reservation-amount.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { RoutePlan } from '../routing/route-plan.js';
import type { GatewayServices } from '../services.js';
import { newId } from '../shared/ids.js';
import { describeError } from '../shared/logger.js';
import { RealtimeBilling, responseHoldUsage } from './realtime-billing.js';
import { CLIENT_SECRET_PREFIX, clientSecretKey } from './client-secret.js';
import { authenticateClientSecret } from './client-secret-auth.js';
import { betaHeader, realtimeFamily } from './realtime-family.js';
import { RealtimeSession } from './realtime-session.js';
import { openUpstream, realtimeTarget, REALTIME_CHANNEL_TYPES } from './realtime-upstream.js';

/** The OpenAI Realtime endpoint's path. */
export const REALTIME_PATH = '/v1/realtime';
const PROTOCOL = 'openai-realtime';
/** The upstream's WebSocket handshake must complete within this. */
const UPSTREAM_HANDSHAKE_MS = 10_000;
/** A `Sec-WebSocket-Key`: 16 random bytes in base64. */
const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;

/** A session whose upstream is open, waiting for the caller's handshake to complete. */
interface Connected {
  upstream: WebSocket;
  /** What the upstream sent before the caller's handshake completed. */
  early: Array<{ data: RawData; binary: boolean }>;
  route: ChannelRoute;
}

/**
 * `GET /v1/realtime?model=…` upgraded to a WebSocket that speaks OpenAI's Realtime protocol, proxied to an OpenAI or
 * Azure OpenAI channel serving the model. Before the handshake completes the caller is authenticated (Bearer header
 * or the browser's subprotocol key), admitted (allowlist, money for a first response, concurrency slot for the whole
 * session, rate windows) and an upstream socket is opened, trying the model's channels in routing order; the session
 * then stays on that channel. A refusal is an ordinary HTTP answer with the spec's error object.
 */
export class RealtimeEndpoint {
  readonly #sessions = new Set<RealtimeSession>();
  readonly #server: WebSocketServer;
  readonly #relay: RelayDependencies;
  readonly #extraHeaders = new WeakMap<IncomingMessage, Record<string, string>>();
  /** Signs and checks client secrets. */
  readonly #secretKey: Buffer;
  #draining = false;

  constructor(
    private readonly services: GatewayServices,
    private readonly config: RealtimeConfig,
  ) {
    this.#relay = relayDependencies(services);
    this.#secretKey = clientSecretKey(services.config.secretKey, services.config.dataDirectory);
    this.#server = new WebSocketServer({
      noServer: true,
      clientTracking: false,
      perMessageDeflate: false,
      maxPayload: config.maxMessageBytes,
      // The key subprotocol is never echoed: only `realtime` is chosen.
      handleProtocols: (protocols) => (protocols.has('realtime') ? 'realtime' : false),
    });
    this.#server.on('headers', (headers, request) => {
      for (const [name, value] of Object.entries(this.#extraHeaders.get(request) ?? {})) headers.push(`${name}: ${value}`);
    });
  }

  /** Sessions open now. */
  get sessions(): number {
    return this.#sessions.size;
  }

  /** Whether `path` is served here (the listener's `upgrade` event goes here for it). */
  serves(path: string): boolean {
    return path === REALTIME_PATH;
  }

  /** Handles one `upgrade` request of the API listener. */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const startedAt = performance.now();
    const url = request.url ?? '/';
    const queryAt = url.indexOf('?');
    const response = new ServerResponse(request);
    response.assignSocket(socket as never);
    const requestId = newId('req');
    response.setHeader('x-request-id', requestId);
    const context: RequestContext = {
      request,
      response,
      requestId,
      method: request.method ?? 'GET',
      path: queryAt < 0 ? url : url.slice(0, queryAt),
      query: new URLSearchParams(queryAt < 0 ? '' : url.slice(queryAt + 1)),
      params: {},
      startedAt,
      clientIp: this.services.clientIp(request),
      family: realtimeFamily,
    };
    socket.on('error', () => undefined);
    this.#open(context, socket, head).catch((thrown: unknown) => {
      const error = toGatewayError(thrown);
      if (error.code === 'internal_error') this.services.logger.error('realtime upgrade failed', { requestId, ...describeError(thrown) });
      if (socket.destroyed) return;
      response.setHeader('connection', 'close');
      response.once('finish', () => socket.destroy());
      sendError(context, error);
    });
  }

  /**
   * The instance is draining: no new session is accepted, and each open one ends within `deadlineMs` (after the
   * response it is writing, if any) with the protocol's `error` event and close code 1001.
   */
  drain(deadlineMs: number): void {
    this.#draining = true;
    for (const session of this.#sessions) session.drain(deadlineMs);
  }

  /** Ends every session now (the instance stops). */
  closeAll(): void {
    this.#draining = true;
    for (const session of this.#sessions) session.drain(0);
  }

  async #open(context: RequestContext, socket: Duplex, head: Buffer): Promise<void> {
    if (!this.serves(context.path)) throw new GatewayError('not_found', `No route for ${context.method} ${context.path}.`);
    if (context.method !== 'GET') throw new GatewayError('method_not_allowed', `Method ${context.method} is not allowed on ${context.path}.`);
    checkHandshake(context.request);
    if (this.#draining) throw new GatewayError('overloaded', 'This gateway instance is restarting and takes no new realtime sessions; connect again.', { retryAfterSeconds: 1 });
    const { services } = this;
    const presented = realtimeFamily.readApiKey(context.request.headers, context.query);
    const { key, account, grant } = presented?.startsWith(CLIENT_SECRET_PREFIX) === true
      ? await authenticateClientSecret(context, services, this.#secretKey, presented)
      : { ...(await authenticate(context, services)), grant: null };
    const meter = new RequestMeter(services, context.requestId, account.id, key.id, PROTOCOL, context.path, context.startedAt);
    meter.expect({ stream: true, promptTokens: 0 });
    const modelName = context.query.get('model') ?? grant?.model ?? null;
    if (grant !== null && modelName !== grant.model) throw new GatewayError('model_not_allowed', `This client secret is for model '${grant.model}' only.`);
    if (modelName === null || modelName === '') throw new GatewayError('bad_request', "The query parameter 'model' is required: wss://<gateway>/v1/realtime?model=<model>.", { param: 'model' });
    const { model, routes } = resolveModel(services, meter, modelName);
    const realtimeRoutes = routes.filter((route) => REALTIME_CHANNEL_TYPES.has(route.channel.type));
    if (realtimeRoutes.length === 0) throw noChannel(model);
    const admission = await admit(services, {
      model,
      estimatedTokens: DEFAULT_OUTPUT_TOKENS_RESERVED,
      maxUsage: { tokens: responseHoldUsage(0, DEFAULT_OUTPUT_TOKENS_RESERVED) },
      key,
      account,
      meter,
      early: null,
      family: realtimeFamily,
    });
    let connected: Connected | null = null;
    try {
      connected = await this.#connect(context, meter, model.id, realtimeRoutes);
      if (socket.destroyed) throw new GatewayError('bad_request', 'The caller left before the session opened.');
    } catch (error) {
      connected?.upstream.terminate();
      const failure = toGatewayError(error);
      meter.observeSettlement({ status: failure.status, errorCode: failure.code }, () => settle(services, meter.settledRequest(), admission, null, { status: failure.status, errorCode: failure.code }));
      throw error;
    }
    // A client secret's session configuration is the session's first event upstream.
    const opening = grant?.session == null ? [] : [JSON.stringify({ type: 'session.update', session: grant.session })];
    this.#accept(context, socket, head, admission, connected, { key, account, modelName, opening });
  }

  /** Opens the upstream socket on the first channel that takes it, in routing order, within the routing's bounds. */
  async #connect(context: RequestContext, meter: RequestMeter, modelId: string, routes: readonly ChannelRoute[]): Promise<Connected> {
    const relay = this.#relay;
    const plan = new RoutePlan(relay.routing, routes, modelId, DEFAULT_OUTPUT_TOKENS_RESERVED);
    const failures: FailedAttempt[] = [];
    const beta = betaHeader(context.request.headers);
    for (let candidate = await plan.next(); candidate !== null; candidate = await plan.next()) {
      try {
        const credential = relay.credentials.next(candidate.route.channel);
        const target = realtimeTarget(candidate.route.channel, credential, candidate.route.upstreamModel, beta);
        if (target === null) {
          plan.skip(candidate);
          continue;
        }
        const attempt = new UpstreamAttempt(relay, candidate, credential, context.requestId, meter);
        attempt.sending(target.url);
        const opening = await openUpstream(target, { timeoutMs: UPSTREAM_HANDSHAKE_MS, maxPayload: this.config.maxMessageBytes });
        if (opening.kind === 'open') {
          attempt.upstreamStatus(101);
          attempt.answered();
          attempt.succeeded();
          return { upstream: opening.socket, early: opening.early, route: candidate.route };
        }
        attempt.upstreamStatus(opening.status);
        if (opening.kind === 'refused') {
          attempt.refused();
          throw callerErrorFromUpstream(opening.status, opening.body);
        }
        attempt.failedBeforeAnswer(opening.failureClass, null);
        failures.push({ failureClass: opening.failureClass, retryAfterMs: null });
      } finally {
        candidate.ticket.release();
      }
    }
    throw exhaustedError(plan, failures, modelId);
  }

  /** Completes the caller's handshake (with the admission's rate-limit headers) and starts the session. */
  #accept(context: RequestContext, socket: Duplex, head: Buffer, admission: Admission, connected: Connected, caller: { key: ApiKey; account: Account; modelName: string; opening: string[] }): void {
    const { request, response } = context;
    response.detachSocket(socket as never);
    this.#extraHeaders.set(request, { 'x-request-id': context.requestId, ...admission.rateLimitHeaders });
    const billing = new RealtimeBilling(this.services, {
      sessionId: context.requestId,
      key: caller.key,
      account: caller.account,
      model: admission.model,
      modelName: caller.modelName,
      channelId: connected.route.channel.id,
      protocol: PROTOCOL,
      endpoint: context.path,
    }, admission);
    this.#server.handleUpgrade(request, socket, head, (client) => {
      const session = new RealtimeSession(client, connected.upstream, billing, this.config, this.services.logger, (ended) => this.#sessions.delete(ended));
      this.#sessions.add(session);
      session.start(connected.early, caller.opening);
      if (this.#draining) session.drain(0);
    });
  }
}

/** GET /v1/realtime without a WebSocket upgrade: a realtime session is only a WebSocket. */
export function realtimeWithoutUpgrade(): Promise<void> {
  return Promise.reject(new GatewayError('bad_request', 'GET /v1/realtime is a WebSocket endpoint: connect with Upgrade: websocket (wss://<gateway>/v1/realtime?model=<model>).'));
}

/** A WebSocket handshake the listener can complete: anything else is refused before the key is looked at. */
function checkHandshake(request: IncomingMessage): void {
  const upgrade = request.headers.upgrade;
  const key = request.headers['sec-websocket-key'];
  if (typeof upgrade !== 'string' || upgrade.toLowerCase() !== 'websocket' || typeof key !== 'string' || !WEBSOCKET_KEY.test(key.trim()) || request.headers['sec-websocket-version'] !== '13') {
    throw new GatewayError('bad_request', 'Not a WebSocket handshake: GET /v1/realtime needs Upgrade: websocket, Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key.');
  }
}
