import type { AnswerReport, SettledReport } from '../billing/answer-report.js';
import { reportOf } from '../billing/answer-report.js';
import type { BillableUsage } from '../billing/compute-cost.js';
import { batchHolder } from '../billing/money-pools.js';
import { settle, trackStream, type AdmissionHold, type CheckpointStream, type RequestCharge, type SettleDependencies } from '../billing/settle.js';
import type { Account, ApiKey } from '../domain/records.js';
import type { Model, ModelKind } from '../domain/model-records.js';
import { toGatewayError } from '../errors/gateway-error.js';
import type { HostedToolOffer } from '../ir/hosted-tool-offer.js';
import { admit, chargedToHolder, type Admission } from '../relay/admission.js';
import { admitBeforeBody } from '../relay/admit-before-body.js';
import { relayDependencies, type RelayDependencies } from '../relay/relay-dependencies.js';
import { AttemptLog } from '../relay/attempt-log.js';
import { RequestMeter } from '../relay/request-meter.js';
import type { ResponseSink } from '../relay/response-sink.js';
import { MeteredSink } from '../relay/metered-sink.js';
import type { GatewayServices } from '../services.js';
import { readRequestIdentity } from '../customers/request-identity.js';
import { authenticate } from '../http/authenticate.js';
import type { RequestContext, RouteHandler } from '../http/request-context.js';
import { responseSink } from '../http/response-sink.js';

/** What one admission needs beyond the caller: the model, its token estimate and, for non-token endpoints, a cost bound. */
export interface AdmissionAsk {
  model: Model;
  /** Prompt estimate plus the requested maximum output: what TPM is charged before forwarding. */
  estimatedTokens: number;
  /**
   * What the body says of the request, as its meter keeps it (the usage row's `stream`, the prompt estimate billed
   * when a cut stream never reported usage): the frame tells the meter as it admits. Left out by the chat operation,
   * which tells the meter as soon as it has read the envelope, so a streamed request refused before admission is
   * recorded as a stream.
   */
  shape?: { stream?: boolean; promptTokens: number };
  /** Upper bound of what the request can be billed for, when tokens alone do not bound it (images, audio). */
  maxUsage?: BillableUsage;
  /** Models that may answer instead (fallbacks): the money held covers the dearest of them. */
  fallbackModels?: readonly Model[];
  /** Tools the upstream bills per call that the request offers: money is held for their calls too. */
  hostedTools?: HostedToolOffer;
}

/** A resource an operation holds until the request ends (a spooled upload). */
export interface Disposable {
  dispose(): Promise<void>;
}

/** Everything an endpoint's operation works with once the caller is authenticated and metered. */
export interface MeteredCall {
  readonly context: RequestContext;
  readonly services: GatewayServices;
  readonly relay: RelayDependencies;
  readonly key: ApiKey;
  readonly account: Account;
  /** What is observed of the request (its usage row's facts, its trace); it holds no money. */
  readonly meter: RequestMeter;
  /** Where the relays record the request's attempts (channels tried, token windows charged, the fallback's model name). */
  readonly attempts: AttemptLog;
  /** Where the relay writes the answer. */
  readonly sink: ResponseSink;
  /**
   * Admits the request (allowlist, money, concurrency, every rate window); the admission carries the answer's rate-limit
   * headers. A value when admission was decided in this turn (see relay/admission.ts), a promise when it waited.
   */
  admit(ask: AdmissionAsk): Admission | Promise<Admission>;
  /**
   * Instead of `admit`, for a batch line whose work ran elsewhere (a provider's batch answered it) and is only billed
   * here: nothing is admitted, and the one settlement is charged against the batch's hold, not the account's free
   * funds. Outside a batch it does nothing (the charge settles on its own).
   */
  chargeToBatchHold(): Promise<void>;
  /** Starts a stream's checkpoints (for the relays): a crash of this instance then charges the stream at its last one. */
  readonly checkpoint: CheckpointStream;
  /** Keeps `resource` until the request ends, however it ends, then disposes of it. */
  hold<T extends Disposable>(resource: T): T;
}

/**
 * The one settlement of a metered request, however it ended: what its admission held (null: refused or never
 * admitted), the request count taken before its body was read, and its answer's report with the attempts and timings
 * of the whole request, settled once (billing/settle.ts) and observed by its meter (access log, trace). It is the only
 * caller of billing's `settle`: every unit billed ends here, the frame's requests from its `finally`, as do the frame
 * of a priced call, a realtime session whose upstream never opened, and each request an opened realtime session is
 * billed as (each response, or the session that produced none).
 */
export function settleMetered(dependencies: SettleDependencies, meter: RequestMeter, hold: AdmissionHold | null, early: RequestCharge | null, ending: SettledReport): void {
  // Bound, so the meter calls the settlement itself rather than back into this frame.
  meter.observeSettlement(ending, settle.bind(null, dependencies, meter.settledRequest(), hold, early, ending));
}

export interface MeteredRouteOptions {
  /**
   * For multipart uploads (up to tens of MB) of an endpoint serving this kind of model: what can be refused without
   * the body (no funds at all, a paused key, the model-independent RPM windows) is refused before the upload is read,
   * and the upload is then read and dropped so the client gets the answer.
   */
  refuseBeforeBody?: ModelKind;
}


/**
 * The frame of every billed endpoint, written once: authenticate the key, open the request's meter, run the
 * endpoint's operation (read and validate the body, resolve the model, `call.admit`, relay), and settle exactly once,
 * here, however the request ends: with the answer's report, or the error's status and code. Held resources are
 * disposed of afterwards, also when the caller left or the upstream failed.
 */
export function meteredRoute(
  services: GatewayServices,
  protocol: string,
  operation: (call: MeteredCall) => Promise<AnswerReport>,
  options: MeteredRouteOptions = {},
): RouteHandler {
  const relay = relayDependencies(services);
  return async (context) => {
    // A cached key is answered in this turn: awaited only when it had to be looked up.
    const authed = authenticate(context, services);
    const { key, account } = authed instanceof Promise ? await authed : authed;
    const meter = new RequestMeter(services, context, account.id, key.id, protocol, context.path, context.startedAt, context.inProcess?.batchId !== undefined);
    const attempts = new AttemptLog(meter);
    // A batch's line is charged against its batch's hold.
    const holder = context.inProcess?.batchId === undefined ? undefined : batchHolder(context.inProcess.batchId);
    const held: Disposable[] = [];
    // Bound rather than a closure of this frame: the sink tells the attempt log, not back up into the frame.
    const sink = new MeteredSink(responseSink(context), attempts.firstByteLeft.bind(attempts));
    let early: RequestCharge | null = null;
    let admission: Admission | null = null;
    let holderCharge: AdmissionHold | null = null;
    let settled = false;
    let report: AnswerReport | null = null;
    const call: MeteredCall = {
      context,
      services,
      relay,
      key,
      account,
      meter,
      attempts,
      sink,
      // Written out rather than `{ ...ask, key, … }`: on Node 20 each property added after a spread costs about
      // half a microsecond (a map transition off V8's fast path), two microseconds a request here.
      admit: (ask) => {
        if (ask.shape !== undefined) meter.expect(ask.shape);
        const admitted = admit(services, {
          model: ask.model, estimatedTokens: ask.estimatedTokens, maxUsage: ask.maxUsage, fallbackModels: ask.fallbackModels, hostedTools: ask.hostedTools, key, account, meter, early, family: context.family, holder,
        });
        return admitted instanceof Promise ? admitted.then((waited) => (admission = waited)) : (admission = admitted);
      },
      chargeToBatchHold: async () => {
        if (holder === undefined || admission !== null || holderCharge !== null) return;
        holderCharge = await chargedToHolder(services, { key, account, meter, holder });
      },
      checkpoint: (price, billed, opening) => {
        if (admission === null || settled) return;
        // Its first byte leaving writes its first checkpoint (trackStream writes it at once when that byte has left).
        attempts.whenFirstByte(services.ledger.checkpointFirstByte.bind(services.ledger, context.requestId));
        trackStream(services.ledger, () => meter.settledRequest(), () => attempts.progress(), admission.reservation, price, billed, opening);
      },
      hold: (resource) => (held.push(resource), resource),
    };
    try {
      meter.identity = readRequestIdentity(protocol, context.request.headers, null);
      if (options.refuseBeforeBody !== undefined) {
        early = await admitBeforeBody(services, { key, account, kind: options.refuseBeforeBody });
      }
      report = await operation(call);
    } catch (error) {
      const failure = toGatewayError(error);
      report = reportOf(error) ?? { status: failure.status, errorCode: failure.code };
      throw error;
    } finally {
      settled = true;
      // The relay's report (or the failure's) with the attempts and timings of the whole request.
      const ending: SettledReport = { ...(report ?? { status: 500, errorCode: 'internal_error' }), ...attempts.progress() };
      settleMetered(services, meter, admission ?? holderCharge, early, ending);
      sink.release();
      if (held.length > 0) await Promise.all(held.map((resource) => resource.dispose()));
    }
  };
}
