import { GatewayError } from '../errors/gateway-error.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { RoutePlan, type Candidate } from '../routing/route-plan.js';
import type { UpstreamAdapter, UpstreamRequest, UpstreamResponse } from '../upstreams/upstream-adapter.js';
import type { RelayDependencies } from './relay-dependencies.js';
import type { ResponseSink } from './response-sink.js';
import type { AttemptLog } from './attempt-log.js';
import type { AnswerPrice, AnswerReport, Billed } from '../billing/answer-report.js';
import type { CheckpointStream } from '../billing/settle.js';
import { failureClassOf } from './upstream-call.js';
import { openAttempt, tryPool, type PoolOutcome } from './pool-attempts.js';
import { readingAnswer } from './upstream-attempt.js';
import type { CallerSignal } from './caller-signal.js';

/** One exchange whose answer is streamed to the caller as it arrives (speech audio, transcription events). */
export interface StreamedExchange {
  /** The request for this channel; null skips the channel. */
  request(adapter: UpstreamAdapter, route: ChannelRoute, credential: string): UpstreamRequest | null;
  /** Sees every chunk before it goes to the caller (usage is read on the side); must not throw. */
  observe?(chunk: Buffer): void;
  /**
   * What the answer is billed if it stops now, once the upstream has begun answering (it bills from then on): the
   * stream is checkpointed with it, so a charge survives this instance dying mid-stream; the report bills it.
   */
  billed(): Billed;
}

/** How the streamed answer is billed and checkpointed. */
export interface StreamedBilling {
  price: AnswerPrice;
  checkpoint: CheckpointStream;
}

/** How a streamed answer ended: complete, the caller left, or cut after bytes had reached the caller. */
export type StreamedEnd = 'complete' | 'aborted' | 'broken';

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** How a streamed relay ended, as the usage row records it. */
function streamedStatus(end: StreamedEnd): Pick<AnswerReport, 'status' | 'errorCode'> {
  switch (end) {
    case 'complete':
      return { status: 200 };
    case 'aborted':
      return { status: 499, errorCode: 'client_closed_request' };
    case 'broken':
      return { status: 502, errorCode: 'upstream_error' };
    default: {
      const unknown: never = end;
      throw new Error(`unknown end ${String(unknown)}`);
    }
  }
}

/**
 * Tries the model's channels in routing order and streams the first 2xx answer's bytes to the caller untouched,
 * with the upstream's Content-Type. Retries on another channel only before the first byte reached the caller;
 * an answer cut after that ends the caller's connection without the final chunk, so the client sees the cut.
 * Returns the answer's report; null when no channel could take the request at all.
 */
export async function relayStreamed(
  dependencies: RelayDependencies,
  sink: ResponseSink,
  attempts: AttemptLog,
  routes: readonly ChannelRoute[],
  exchange: StreamedExchange,
  responseHeaders: Record<string, string>,
  billing: StreamedBilling,
): Promise<AnswerReport | null> {
  const model = billing.price.model?.id ?? attempts.modelId ?? '';
  const plan = new RoutePlan(dependencies.routing, routes, model, attempts.request.promptTokensEstimate);
  const end = await tryPool(dependencies, sink, plan, model, (candidate, signal) => attemptOne(dependencies, sink, attempts, plan, candidate, exchange, responseHeaders, billing, signal));
  return end === null ? null : { ...streamedStatus(end), ...exchange.billed(), price: billing.price };
}

async function attemptOne(
  dependencies: RelayDependencies,
  sink: ResponseSink,
  attempts: AttemptLog,
  plan: RoutePlan,
  candidate: Candidate,
  exchange: StreamedExchange,
  responseHeaders: Record<string, string>,
  billing: StreamedBilling,
  signal: CallerSignal,
): Promise<PoolOutcome<StreamedEnd>> {
  const opened = await openAttempt(dependencies, sink, attempts, plan, candidate, (adapter, route, credential) => exchange.request(adapter, route, credential), { stream: true, signal });
  if (opened.kind === 'aborted') return { kind: 'done', value: 'aborted' };
  if (opened.kind !== 'response') return opened;
  const { attempt } = opened;
  attempt.answered();
  attempt.chargeTokens();
  const end = await readingAnswer(attempt, () => forward(sink, opened.response, exchange, responseHeaders, billing, signal));
  if (end.kind === 'retry') {
    attempt.failedBeforeAnswer(end.failureClass, null);
    return { kind: 'failed', failure: { failureClass: end.failureClass, retryAfterMs: null } };
  }
  if (end.kind === 'complete') attempt.succeeded();
  else if (end.kind === 'aborted') attempt.aborted();
  else attempt.failed(end.failureClass, null);
  return { kind: 'done', value: end.kind };
}

type ForwardEnd =
  | { kind: 'complete' }
  | { kind: 'aborted' }
  | { kind: 'broken'; failureClass: ReturnType<typeof failureClassOf> }
  | { kind: 'retry'; failureClass: ReturnType<typeof failureClassOf> };

async function forward(
  sink: ResponseSink,
  response: UpstreamResponse,
  exchange: StreamedExchange,
  responseHeaders: Record<string, string>,
  billing: StreamedBilling,
  signal: CallerSignal,
): Promise<ForwardEnd> {
  const contentType = header(response.headers['content-type']) ?? 'application/octet-stream';
  const client = sink.openStream(Object.assign({}, responseHeaders, { 'content-type': contentType }), signal, () => undefined);
  let tracked = false;
  try {
    for await (const chunk of response.body) {
      if (!tracked) {
        tracked = true;
        billing.checkpoint(billing.price, async () => exchange.billed());
      }
      exchange.observe?.(chunk);
      await client.write(chunk);
    }
    client.end();
    return { kind: 'complete' };
  } catch (error) {
    response.discard();
    if (signal.aborted) return { kind: 'aborted' };
    const failureClass = failureClassOf(error, true);
    if (!client.started) return { kind: 'retry', failureClass };
    // Binary audio has no in-band error: end the connection without the final chunk so the client sees the cut.
    sink.cut(new GatewayError('upstream_error', 'The upstream provider stopped answering mid-response.', { status: 502 }));
    return { kind: 'broken', failureClass };
  }
}
