import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';
import { WebSocketServer } from 'ws';
import { geminiFamily } from '../codecs/gemini/family.js';
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
import { DEFAULT_OUTPUT_TOKENS_RESERVED } from '../billing/reservation-amount.js';
import type { Model } from '../domain/records.js';
import type { GatewayServices } from '../services.js';
import { newId } from '../shared/ids.js';
import { describeError } from '../shared/logger.js';
import { RealtimeBilling, responseHoldUsage } from './realtime-billing.js';
import { CLIENT_SECRET_PREFIX, clientSecretKey } from './client-secret.js';
import { authenticateClientSecret } from './client-secret-auth.js';
import { betaHeader, realtimeFamily } from './realtime-family.js';
import { RealtimeSession } from './realtime-session.js';
import { openUpstream, realtimeTarget, REALTIME_CHANNEL_TYPES } from './realtime-upstream.js';
import { connectUpstream, type Connected } from './realtime-connect.js';
import type { RealtimeDialect } from './realtime-dialect.js';
import { openAIRealtimeDialect } from './openai-realtime-dialect.js';
import { geminiLiveDialect } from './gemini-live-dialect.js';
import { GEMINI_LIVE_CHANNEL_TYPES, geminiLivePath, geminiLiveTarget, geminiLiveVersion, setupForChannel } from './gemini-live-upstream.js';
import { geminiCloseCode, readSetup, SETUP_TIMEOUT_MS } from './gemini-live-setup.js';
import { closeReasonText } from './realtime-dialect.js';

/** The OpenAI Realtime endpoint's path. */
export const REALTIME_PATH = '/v1/realtime';
/** The upstream's WebSocket handshake must complete within this. */
const UPSTREAM_HANDSHAKE_MS = 10_000;
/** A `Sec-WebSocket-Key`: 16 random bytes in base64. */
const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;

/** Who a session is for, as its billing needs it. */
interface Caller {
  key: ApiKey;
  account: Account;
  modelName: string;
}

/**
 * Realtime sessions over WebSocket upgrades of the API listener, in two protocols:
 *
 * - `GET /v1/realtime?model=…`, OpenAI's Realtime protocol, proxied to an OpenAI or Azure OpenAI channel serving the
 *   model. Before the handshake completes the caller is authenticated (Bearer header or the browser's subprotocol
 *   key), admitted (allowlist, money for a first response, concurrency slot for the whole session, rate windows) and
 *   an upstream socket is opened, trying the model's channels in routing order. A refusal is an ordinary HTTP answer
 *   with the spec's error object.
 * - Gemini Live at Google's path (`/ws/google.ai.generativelanguage.<version>.GenerativeService.BidiGenerateContent`),
 *   proxied to a Gemini channel. The key (`?key=` or `x-goog-api-key`) is checked before the handshake (a refusal is
 *   an HTTP answer with Google's error object); the model comes in the caller's first message, `setup`, so admission
 *   and the upstream's opening (its `setup` answered by `setupComplete`) follow the handshake, and a refusal then is
 *   the protocol's own: a close code with the reason as text.
 *
 * Either way the session then stays on its channel.
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
    return path === REALTIME_PATH || geminiLiveVersion(path) !== null;
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
    const path = queryAt < 0 ? url : url.slice(0, queryAt);
    const gemini = geminiLiveVersion(path) !== null;
    const context: RequestContext = {
      request,
      response,
      requestId,
      method: request.method ?? 'GET',
      path,
      query: new URLSearchParams(queryAt < 0 ? '' : url.slice(queryAt + 1)),
      params: {},
      startedAt,
      clientIp: this.services.clientIp(request),
      family: gemini ? geminiFamily : realtimeFamily,
    };
    socket.on('error', () => undefined);
    (gemini ? this.#openGemini(context, socket, head) : this.#open(context, socket, head)).catch((thrown: unknown) => {
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
    checkHandshake(context.request, context.path);
    if (this.#draining) throw new GatewayError('overloaded', 'This gateway instance is restarting and takes no new realtime sessions; connect again.', { retryAfterSeconds: 1 });
    const { services } = this;
    const presented = realtimeFamily.readApiKey(context.request.headers, context.query);
    const { key, account, grant } = presented?.startsWith(CLIENT_SECRET_PREFIX) === true
      ? await authenticateClientSecret(context, services, this.#secretKey, presented)
      : { ...(await authenticate(context, services)), grant: null };
    const meter = new RequestMeter(services, context.requestId, account.id, key.id, openAIRealtimeDialect.protocol, context.path, context.startedAt);
    meter.expect({ stream: true, promptTokens: 0 });
    const modelName = context.query.get('model') ?? grant?.model ?? null;
    if (grant !== null && modelName !== grant.model) throw new GatewayError('model_not_allowed', `This client secret is for model '${grant.model}' only.`);
    if (modelName === null || modelName === '') throw new GatewayError('bad_request', "The query parameter 'model' is required: wss://<gateway>/v1/realtime?model=<model>.", { param: 'model' });
    const { model, routes } = resolveModel(services, meter, modelName);
    const realtimeRoutes = routes.filter((route) => REALTIME_CHANNEL_TYPES.has(route.channel.type));
    if (realtimeRoutes.length === 0) throw noChannel(model);
    const admission = await this.#admit(context, meter, model, key, account);
    const beta = betaHeader(context.request.headers);
    const connected = await this.#connect(context, meter, admission, model.id, realtimeRoutes, () => socket.destroyed, (route, credential) => {
      const target = realtimeTarget(route.channel, credential, route.upstreamModel, beta);
      return target === null ? null : { url: target.url, opening: openUpstream(target, { timeoutMs: UPSTREAM_HANDSHAKE_MS, maxPayload: this.config.maxMessageBytes }) };
    });
    // A client secret's session configuration is the session's first event upstream.
    const opening = grant?.session == null ? [] : [JSON.stringify({ type: 'session.update', session: grant.session })];
    this.#accept(context, socket, head, admission, connected, { key, account, modelName, opening });
  }

  /**
   * A Gemini Live session: the key before the handshake, then the caller's `setup` names the model, which is admitted
   * and opened upstream (the setup sent with the channel's model); the upstream's `setupComplete` goes to the caller
   * as the session starts. A refusal after the handshake closes with Google's code for it and the reason as text.
   */
  async #openGemini(context: RequestContext, socket: Duplex, head: Buffer): Promise<void> {
    if (context.method !== 'GET') throw new GatewayError('method_not_allowed', `Method ${context.method} is not allowed on ${context.path}.`);
    checkHandshake(context.request, context.path);
    if (this.#draining) throw new GatewayError('overloaded', 'This gateway instance is restarting and takes no new live sessions; connect again.', { retryAfterSeconds: 1 });
    const { services } = this;
    const { key, account } = await authenticate(context, services);
    const version = geminiLiveVersion(context.path) ?? 'v1beta';
    const endpoint = geminiLivePath(version);
    context.response.detachSocket(socket as never);
    this.#extraHeaders.set(context.request, { 'x-request-id': context.requestId });
    const client = await new Promise<WebSocket>((resolve) => this.#server.handleUpgrade(context.request, socket, head, resolve));
    client.on('error', () => undefined);
    try {
      const { modelName, setup } = await readSetup(client, SETUP_TIMEOUT_MS);
      const meter = new RequestMeter(services, context.requestId, account.id, key.id, geminiLiveDialect.protocol, endpoint, context.startedAt);
      meter.expect({ stream: true, promptTokens: 0 });
      const { model, routes } = resolveModel(services, meter, modelName);
      const liveRoutes = routes.filter((route) => GEMINI_LIVE_CHANNEL_TYPES.has(route.channel.type));
      if (liveRoutes.length === 0) throw noChannel(model);
      const admission = await this.#admit(context, meter, model, key, account);
      const connected = await this.#connect(context, meter, admission, model.id, liveRoutes, () => client.readyState !== client.OPEN, (route, credential) => {
        const target = geminiLiveTarget(route.channel, credential, version);
        return { url: target.url, opening: openUpstream(target, { timeoutMs: UPSTREAM_HANDSHAKE_MS, maxPayload: this.config.maxMessageBytes, exchange: setupForChannel(setup, route.upstreamModel) }) };
      });
      const billing = this.#billing(context, admission, connected, { key, account, modelName }, geminiLiveDialect, endpoint);
      this.#start(client, connected, billing, geminiLiveDialect, []);
      client.resume();
    } catch (thrown) {
      const error = toGatewayError(thrown);
      if (error.code === 'internal_error') services.logger.error('live session failed to open', { requestId: context.requestId, ...describeError(thrown) });
      // The caller's reading was paused after its setup: its answer to the close must be read.
      client.resume();
      if (client.readyState === client.OPEN) client.close(geminiCloseCode(error), closeReasonText(error.message));
      else client.terminate();
    }
  }

  #admit(context: RequestContext, meter: RequestMeter, model: Model, key: ApiKey, account: Account): Promise<Admission> {
    return admit(this.services, {
      model,
      estimatedTokens: DEFAULT_OUTPUT_TOKENS_RESERVED,
      maxUsage: { tokens: responseHoldUsage(0, DEFAULT_OUTPUT_TOKENS_RESERVED) },
      key,
      account,
      meter,
      early: null,
      family: context.family,
    });
  }

  /**
   * Opens the upstream on the first channel that takes it; when none does, or the caller left meanwhile, the admission
   * is settled as that failure (its hold and slot given back, the attempt on record).
   */
  async #connect(context: RequestContext, meter: RequestMeter, admission: Admission, modelId: string, routes: Parameters<typeof connectUpstream>[4], callerLeft: () => boolean, open: Parameters<typeof connectUpstream>[5]): Promise<Connected> {
    let connected: Connected | null = null;
    try {
      connected = await connectUpstream(this.#relay, context, meter, modelId, routes, open);
      if (callerLeft()) throw new GatewayError('bad_request', 'The caller left before the session opened.');
      return connected;
    } catch (error) {
      connected?.upstream.terminate();
      const failure = toGatewayError(error);
      meter.observeSettlement({ status: failure.status, errorCode: failure.code }, () => settle(this.services, meter.settledRequest(), admission, null, { status: failure.status, errorCode: failure.code }));
      throw error;
    }
  }

  /** Completes the caller's handshake (with the admission's rate-limit headers) and starts the session. */
  #accept(context: RequestContext, socket: Duplex, head: Buffer, admission: Admission, connected: Connected, caller: Caller & { opening: string[] }): void {
    const { request, response } = context;
    response.detachSocket(socket as never);
    this.#extraHeaders.set(request, { 'x-request-id': context.requestId, ...admission.rateLimitHeaders });
    const billing = this.#billing(context, admission, connected, caller, openAIRealtimeDialect, context.path);
    this.#server.handleUpgrade(request, socket, head, (client) => this.#start(client, connected, billing, openAIRealtimeDialect, caller.opening));
  }

  #billing(context: RequestContext, admission: Admission, connected: Connected, caller: Caller, dialect: RealtimeDialect, endpoint: string): RealtimeBilling {
    return new RealtimeBilling(this.services, {
      sessionId: context.requestId,
      key: caller.key,
      account: caller.account,
      model: admission.model,
      modelName: caller.modelName,
      channelId: connected.route.channel.id,
      protocol: dialect.protocol,
      endpoint,
    }, admission);
  }

  #start(client: WebSocket, connected: Connected, billing: RealtimeBilling, dialect: RealtimeDialect, opening: string[]): void {
    const session = new RealtimeSession(client, connected.upstream, billing, dialect, this.config, this.services.logger, (ended) => this.#sessions.delete(ended));
    this.#sessions.add(session);
    session.start(connected.early, opening);
    if (this.#draining) session.drain(0);
  }
}

/** GET /v1/realtime without a WebSocket upgrade: a realtime session is only a WebSocket. */
export function realtimeWithoutUpgrade(): Promise<void> {
  return Promise.reject(new GatewayError('bad_request', 'GET /v1/realtime is a WebSocket endpoint: connect with Upgrade: websocket (wss://<gateway>/v1/realtime?model=<model>).'));
}

/** A WebSocket handshake the listener can complete: anything else is refused before the key is looked at. */
function checkHandshake(request: IncomingMessage, path: string): void {
  const upgrade = request.headers.upgrade;
  const key = request.headers['sec-websocket-key'];
  if (typeof upgrade !== 'string' || upgrade.toLowerCase() !== 'websocket' || typeof key !== 'string' || !WEBSOCKET_KEY.test(key.trim()) || request.headers['sec-websocket-version'] !== '13') {
    throw new GatewayError('bad_request', `Not a WebSocket handshake: GET ${path} needs Upgrade: websocket, Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key.`);
  }
}
