import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { WebSocket, WebSocketServer } from 'ws';
import { loadOnce, type LoadOnce } from '../shared/load-once.js';
import { webSocketModule } from './ws-module.js';
import { openUpgrade, upgradeContext } from './socket-upgrade.js';
import { geminiFamily } from '../codecs/gemini/family.js';
import type { RealtimeConfig } from '../config/realtime-config.js';
import type { Account, ApiKey } from '../domain/records.js';
import { GatewayError, toGatewayError } from '../errors/gateway-error.js';
import { authenticate, reauthenticate } from '../http/authenticate.js';
import type { RequestContext } from '../http/request-context.js';
import { noChannel, resolveModel } from '../operations/resolve-model.js';
import { settleMetered } from '../operations/metered-frame.js';
import { admit, checkBeforeMoney, type Admission } from '../relay/admission.js';
import { relayDependencies, type RelayDependencies } from '../relay/relay-dependencies.js';
import { AttemptLog } from '../relay/attempt-log.js';
import { RequestMeter } from '../relay/request-meter.js';
import { DEFAULT_OUTPUT_TOKENS_RESERVED } from '../billing/reservation-amount.js';
import type { Model } from '../domain/model-records.js';
import type { GatewayServices } from '../services.js';
import { describeError } from '../shared/logger.js';
import { RealtimeBilling, responseHoldUsage } from './realtime-billing.js';
import { CLIENT_SECRET_PREFIX, clientSecretKey } from './client-secret.js';
import { authenticateClientSecret } from './client-secret-auth.js';
import { betaHeader, realtimeFamily } from './realtime-family.js';
import { RealtimeSession, type RealtimeSessionLimits } from './realtime-session.js';
import { admitSecretSession } from './client-secret-uses.js';
import { AUTH_TOKEN_NAME_PREFIX } from './gemini-auth-tokens-route.js';
import { openUpstream, realtimeTarget, REALTIME_CHANNEL_TYPES } from './realtime-upstream.js';
import { connectUpstream, type Connected } from './realtime-connect.js';
import type { RealtimeDialect } from './realtime-dialect.js';
import { openAIRealtimeDialect } from './openai-realtime-dialect.js';
import { geminiLiveDialect } from './gemini-live-dialect.js';
import { GEMINI_LIVE_CHANNEL_TYPES, geminiLivePath, isConstrainedLivePath, geminiLiveTarget, geminiLiveVersion, setupForChannel } from './gemini-live-upstream.js';
import { geminiCloseCode, readSetup, SETUP_TIMEOUT_MS } from './gemini-live-setup.js';
import { closeReasonText } from './realtime-dialect.js';
import { translatedDialect, type FrameTranslator } from './translation/frame-translator.js';
import { OpenAIClientOnGemini } from './translation/openai-client-on-gemini.js';
import { GeminiClientOnOpenAI } from './translation/gemini-client-on-openai.js';

/** A session whose caller and upstream speak different protocols: its translator and the dialect billing reads. */
interface Translation {
  translator: FrameTranslator;
  dialect: RealtimeDialect;
}

/** The OpenAI Realtime endpoint's path. */
export const REALTIME_PATH = '/v1/realtime';
/** The upstream's WebSocket handshake must complete within this. */
const UPSTREAM_HANDSHAKE_MS = 10_000;
/** A `Sec-WebSocket-Key`: 16 random bytes in base64. */
const WEBSOCKET_KEY = /^[+/0-9A-Za-z]{22}==$/;

/** Who a session is for, as its billing needs it: the key and account, the meter of its upgrade. */
interface Caller {
  key: ApiKey;
  account: Account;
  meter: RequestMeter;
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
  /** Made at the first session (the WebSocket library is loaded then). */
  readonly #server: LoadOnce<WebSocketServer>;
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
    this.#server = loadOnce(async () => {
      const { WebSocketServer } = await webSocketModule.get();
      const server = new WebSocketServer({
        noServer: true,
        clientTracking: false,
        perMessageDeflate: false,
        maxPayload: config.maxMessageBytes,
        // The key subprotocol is never echoed: only `realtime` is chosen.
        handleProtocols: (protocols) => (protocols.has('realtime') ? 'realtime' : false),
      });
      server.on('headers', (headers, request) => {
        for (const [name, value] of Object.entries(this.#extraHeaders.get(request) ?? {})) headers.push(`${name}: ${value}`);
      });
      return server;
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
    const gemini = (path: string): boolean => geminiLiveVersion(path) !== null;
    const context = upgradeContext(this.services, request, socket, (path) => gemini(path) ? geminiFamily : realtimeFamily);
    openUpgrade(this.services, context, socket, () => gemini(context.path) ? this.#openGemini(context, socket, head) : this.#open(context, socket, head), 'realtime upgrade failed');
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
    const server = await this.#server.get();
    const { services } = this;
    const presented = realtimeFamily.readApiKey(context.request.headers, context.query);
    const { key, account, grant } = presented?.startsWith(CLIENT_SECRET_PREFIX) === true
      ? await authenticateClientSecret(context, services, this.#secretKey, presented)
      : { ...(await authenticate(context, services)), grant: null };
    const meter = RequestMeter.ofSession(services, context.requestId, account.id, key.id, openAIRealtimeDialect.protocol, context.path, context.startedAt);
    const modelName = context.query.get('model') ?? grant?.model ?? null;
    if (grant !== null && modelName !== grant.model) throw new GatewayError('model_not_allowed', `This client secret is for model '${grant.model}' only.`);
    if (grant !== null) await admitSecretSession(services.limiter, grant, services.clock.now(), 'client secret');
    if (modelName === null || modelName === '') throw new GatewayError('bad_request', "The query parameter 'model' is required: wss://<gateway>/v1/realtime?model=<model>.", { param: 'model' });
    const { model, routes } = resolveModel(services, meter, modelName);
    const realtimeRoutes = routes.filter((route) => REALTIME_CHANNEL_TYPES.has(route.channel.type));
    // A model only Gemini channels serve is reached over Gemini Live, the two protocols translated.
    const translated = realtimeRoutes.length === 0;
    const liveRoutes = translated ? routes.filter((route) => GEMINI_LIVE_CHANNEL_TYPES.has(route.channel.type)) : [];
    if (realtimeRoutes.length === 0 && liveRoutes.length === 0) throw noChannel(model);
    const beta = betaHeader(context.request.headers);
    if (translated && beta !== null) throw new GatewayError('bad_request', `Model '${modelName}' is served over Gemini Live, which the gateway translates from the GA Realtime protocol only: connect without OpenAI-Beta: realtime=v1.`);
    const admission = await this.#admit(context, meter, model, key, account);
    const connected = await this.#connect(context, meter, admission, model.id, translated ? liveRoutes : realtimeRoutes, () => socket.destroyed, (route, credential) => {
      const target = translated ? geminiLiveTarget(route.channel, credential) : realtimeTarget(route.channel, credential, route.upstreamModel, beta);
      return target === null ? null : { url: target.url, opening: openUpstream(target, { timeoutMs: UPSTREAM_HANDSHAKE_MS, maxPayload: this.config.maxMessageBytes }) };
    });
    const translation: Translation | null = translated
      ? { translator: new OpenAIClientOnGemini(modelName, connected.route.upstreamModel, grant?.session ?? null), dialect: translatedDialect(openAIRealtimeDialect, geminiLiveDialect) }
      : null;
    // A client secret's session configuration is the session's first event upstream (translated: the setup's start).
    const opening = grant?.session == null || translated ? [] : [JSON.stringify({ type: 'session.update', session: grant.session })];
    this.#accept(server, context, socket, head, admission, connected, { key, account, meter, opening }, translation);
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
    const server = await this.#server.get();
    const { services } = this;
    const token = ephemeralToken(context);
    // A real key is checked before the handshake; an ephemeral token after it, so a browser (which cannot read a
    // refused handshake) hears why in the close.
    const caller = token === null ? await authenticate(context, services) : null;
    const version = geminiLiveVersion(context.path) ?? 'v1beta';
    const endpoint = geminiLivePath(version, isConstrainedLivePath(context.path));
    context.response.detachSocket(socket as never);
    this.#extraHeaders.set(context.request, { 'x-request-id': context.requestId });
    const client = await new Promise<WebSocket>((resolve) => server.handleUpgrade(context.request, socket, head, resolve));
    client.on('error', () => undefined);
    try {
      const reading = readSetup(client, SETUP_TIMEOUT_MS);
      reading.catch(() => undefined);
      const { key, account, grant } = caller !== null ? { ...caller, grant: null } : await authenticateClientSecret(context, services, this.#secretKey, token ?? '');
      const { modelName, setup: ownSetup } = await reading;
      let limits: RealtimeSessionLimits = this.config;
      if (grant !== null) {
        if (modelName !== grant.model) throw new GatewayError('model_not_allowed', `This token is for model '${grant.model}' only.`);
        const now = services.clock.now();
        await admitSecretSession(services.limiter, grant, now);
        // A limited token's sessions end when it expires.
        if (grant.sessions !== undefined) limits = { ...limits, maxSessionMs: Math.max(1, Math.min(limits.maxSessionMs, grant.expiresAt - now)) };
      }
      // What the token fixes is laid over the caller's own setup.
      const setup = grant?.liveSetup === undefined ? ownSetup : { ...ownSetup, ...grant.liveSetup };
      const meter = RequestMeter.ofSession(services, context.requestId, account.id, key.id, geminiLiveDialect.protocol, endpoint, context.startedAt);
      const { model, routes } = resolveModel(services, meter, modelName);
      const liveRoutes = routes.filter((route) => GEMINI_LIVE_CHANNEL_TYPES.has(route.channel.type));
      // A model only OpenAI Realtime channels serve is reached over that protocol, the two protocols translated.
      const translated = liveRoutes.length === 0;
      const realtimeRoutes = translated ? routes.filter((route) => REALTIME_CHANNEL_TYPES.has(route.channel.type)) : [];
      if (liveRoutes.length === 0 && realtimeRoutes.length === 0) throw noChannel(model);
      const admission = await this.#admit(context, meter, model, key, account);
      const connected = await this.#connect(context, meter, admission, model.id, translated ? realtimeRoutes : liveRoutes, () => client.readyState !== client.OPEN, (route, credential) => {
        if (translated) {
          const target = realtimeTarget(route.channel, credential, route.upstreamModel, null);
          return target === null ? null : { url: target.url, opening: openUpstream(target, { timeoutMs: UPSTREAM_HANDSHAKE_MS, maxPayload: this.config.maxMessageBytes }) };
        }
        const target = geminiLiveTarget(route.channel, credential, version);
        return { url: target.url, opening: openUpstream(target, { timeoutMs: UPSTREAM_HANDSHAKE_MS, maxPayload: this.config.maxMessageBytes, exchange: setupForChannel(setup, route.upstreamModel) }) };
      });
      const dialect = translated ? translatedDialect(geminiLiveDialect, openAIRealtimeDialect) : geminiLiveDialect;
      const billing = this.#billing(context, admission, connected, { key, account, meter });
      this.#start(client, connected, billing, dialect, [], translated ? new GeminiClientOnOpenAI(setup) : null, limits);
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

  #admit(context: RequestContext, meter: RequestMeter, model: Model, key: ApiKey, account: Account): Admission | Promise<Admission> {
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
    const attempts = new AttemptLog(meter);
    try {
      connected = await connectUpstream(this.#relay, context, attempts, modelId, routes, open);
      if (callerLeft()) throw new GatewayError('bad_request', 'The caller left before the session opened.');
      return connected;
    } catch (error) {
      connected?.upstream.terminate();
      const failure = toGatewayError(error);
      const report = { status: failure.status, errorCode: failure.code, ...attempts.progress() };
      settleMetered(this.services, meter, admission, null, report);
      throw error;
    }
  }

  /** Completes the caller's handshake (with the admission's rate-limit headers) and starts the session. */
  #accept(server: WebSocketServer, context: RequestContext, socket: Duplex, head: Buffer, admission: Admission, connected: Connected, caller: Caller & { opening: string[] }, translation: Translation | null = null): void {
    const { request, response } = context;
    response.detachSocket(socket as never);
    this.#extraHeaders.set(request, { 'x-request-id': context.requestId, ...admission.rateLimitHeaders });
    const dialect = translation?.dialect ?? openAIRealtimeDialect;
    const billing = this.#billing(context, admission, connected, caller);
    server.handleUpgrade(request, socket, head, (client) => this.#start(client, connected, billing, dialect, caller.opening, translation?.translator ?? null));
  }

  /**
   * The session's billing. Before each response after the first (which admission checked) the caller is checked again
   * as a request would be: its key's standing and IP allowlist as the key verifier knows them now, and the key's
   * model allowlist; so a key revoked, expired or disabled, or an account disabled or deleted, anywhere stops its
   * live sessions at their next response.
   */
  #billing(context: RequestContext, admission: Admission, connected: Connected, caller: Caller): RealtimeBilling {
    const { services } = this;
    const { model } = admission;
    return new RealtimeBilling(services, {
      session: caller.meter,
      key: caller.key,
      account: caller.account,
      model,
      channelId: connected.route.channel.id,
      recheck: async () => {
        const { key, account } = await reauthenticate(context, services, caller.key);
        checkBeforeMoney({ key, account, model, name: caller.meter.modelId });
      },
    }, admission);
  }

  #start(client: WebSocket, connected: Connected, billing: RealtimeBilling, dialect: RealtimeDialect, opening: string[], translator: FrameTranslator | null = null, limits: RealtimeSessionLimits = this.config): void {
    const session = new RealtimeSession(client, connected.upstream, billing, dialect, limits, this.services.logger, (ended) => this.#sessions.delete(ended), translator);
    this.#sessions.add(session);
    session.start(connected.early, opening);
    if (this.#draining) session.drain(0);
  }
}

/**
 * The ephemeral token a Gemini Live caller presents: `access_token` (Google's clients send an ephemeral token so, on
 * the `…Constrained` path), or a key that is one (`auth_tokens/ek_…`, or a client secret `ek_…`); without the
 * `auth_tokens/` of its name. Null when the caller presents a real key (or nothing).
 */
function ephemeralToken(context: RequestContext): string | null {
  const accessToken = context.query.get('access_token');
  const presented = accessToken ?? geminiFamily.readApiKey(context.request.headers, context.query);
  if (presented === null) return null;
  const token = presented.startsWith(AUTH_TOKEN_NAME_PREFIX) ? presented.slice(AUTH_TOKEN_NAME_PREFIX.length) : presented;
  return accessToken !== null || token.startsWith(CLIENT_SECRET_PREFIX) ? token : null;
}

/** A WebSocket handshake the listener can complete: anything else is refused before the key is looked at. */
export function checkHandshake(request: IncomingMessage, path: string): void {
  const upgrade = request.headers.upgrade;
  const key = request.headers['sec-websocket-key'];
  if (typeof upgrade !== 'string' || upgrade.toLowerCase() !== 'websocket' || typeof key !== 'string' || !WEBSOCKET_KEY.test(key.trim()) || request.headers['sec-websocket-version'] !== '13') {
    throw new GatewayError('bad_request', `Not a WebSocket handshake: GET ${path} needs Upgrade: websocket, Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key.`);
  }
}
