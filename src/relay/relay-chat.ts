import type { PassThroughCodec, PassThroughStreamObserver } from '../codecs/client-codec.js';
import { SseEventSplitter } from '../wire/sse-event-splitter.js';
import type { AnswerFacts } from '../ir/answer-facts.js';
import type { Usage } from '../ir/usage.js';
import type { Channel } from '../domain/records.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { RoutePlan } from '../routing/route-plan.js';
import type { UpstreamAdapter, UpstreamRequest } from '../upstreams/upstream-adapter.js';
import type { ClientWire, UpstreamOperation } from '../wire/wire.js';
import { answerNamingModel } from '../wire/pass-through-body.js';
import { RunningTokenCount } from '../tokenize/running-token-count.js';
import { costHeader, withReport, type AnswerReport } from '../billing/answer-report.js';
import { answerWithCost } from '../codecs/answer-cost.js';
import { channelPassThrough, chatWireOf, type ChatWireChoice, type RequestedChat } from './choose-wire.js';
import type { RelayDependencies } from './relay-dependencies.js';
import { answeredOutcome, failureClassOf, readWholeBody, unansweredOutcome, type UpstreamOutcome } from './upstream-call.js';
import { openedOf, PoolRun, startAttempt, type OpenedAttempt, type PoolOutcome } from './pool-attempts.js';
import type { UpstreamAttempt } from './upstream-attempt.js';
import { usageAtFirstByte, usageOfDelivered, type DeliveredAnswer } from './delivered-usage.js';
import type { CallerSignal } from './caller-signal.js';
import { StreamStop } from './live-streams.js';
import { aborted, breakOffStream, callerLeft, endStream, localPromptTokens, memoized, stopStream, type OpenStream } from './chat-answer-ends.js';
import type { AnswerContext, ChatRelayRequest, RelayResult } from './chat-relay-request.js';
import { relayTranslated } from './chat-translated.js';

/**
 * Sends a chat request to the model's channels in routing order until one answers. A channel that speaks the
 * caller's protocol gets the caller's body (pass-through); any other gets the canonical request in its own
 * wire format (translated). Retries happen only before the first byte reached the caller. Returns the answer's report.
 */
export function relayChat(dependencies: RelayDependencies, request: ChatRelayRequest, routes: readonly ChannelRoute[]): Promise<AnswerReport> {
  const { attempts } = request;
  const model = request.price.model?.id ?? attempts.modelId ?? '';
  const plan = new RoutePlan(dependencies.routing, routes, model, request.estimatedTokens ?? attempts.request.promptTokensEstimate, true, request.price.model?.routingStrategy);
  // A stream ends early when its key or account changes so that a new request would be refused (live-streams.ts).
  const stop = request.stream && dependencies.liveStreams !== undefined ? new StreamStop(dependencies.liveStreams, attempts.request.keyId, attempts.request.accountId) : null;
  return relayOnPlan(dependencies, request, plan, new PoolRun(dependencies, request.sink, plan, model), stop);
}

/**
 * The plan's candidates in routing order (as `tryPool` walks them), each attempt in this one frame: it waits for the
 * upstream's head and then for its whole answer (or its stream) itself, so the answer's arrival resumes this frame
 * alone. The stop, when there is one, is closed however the relay ends.
 */
async function relayOnPlan(dependencies: RelayDependencies, request: ChatRelayRequest, plan: RoutePlan, pool: PoolRun, stop: StreamStop | null): Promise<AnswerReport> {
  try {
    let candidate = plan.next();
    if (candidate instanceof Promise) candidate = await candidate;
    while (candidate !== null) {
      let outcome: PoolOutcome<AnswerReport>;
      try {
        const adapter = dependencies.adapters.get(candidate.route.channel.type) as UpstreamAdapter;
        const wire = request.guard != null ? GUARDED_WIRE : wireOf(adapter, candidate.route.channel, { kind: 'chat', codec: request.codec, stream: request.stream });
        const build = (channelAdapter: UpstreamAdapter, route: ChannelRoute, credential: string): UpstreamRequest => buildUpstreamRequest(channelAdapter, route, credential, request, wire);
        const started = startAttempt(dependencies, request.sink, request.attempts, plan, candidate, build, { stream: request.stream, signal: stop?.signalFor(pool.signal) ?? pool.signal });
        if (started.kind === 'skipped') outcome = started;
        else {
          let upstream: UpstreamOutcome | Promise<UpstreamOutcome>;
          try {
            upstream = answeredOutcome(adapter, await started.sent, started.signal, started.now);
          } catch (error) {
            upstream = unansweredOutcome(error, started.signal);
          }
          const opened = openedOf(started, upstream instanceof Promise ? await upstream : upstream);
          if (opened.kind === 'aborted') outcome = leftBeforeAnswer(request, pool.signal, stop);
          else if (opened.kind !== 'response') outcome = opened;
          else {
            const context = answerContext(dependencies, request, opened, pool.signal, stop);
            let result: RelayResult;
            try {
              if (wire.kind !== 'pass-through') result = await relayTranslated(adapter, context);
              // Same protocol: the upstream's bytes go back untouched, usage is read on the side.
              else if (request.stream) result = await passThroughStream(context, wire.codec);
              else {
                let read: Buffer | RelayResult;
                try {
                  read = await readWholeBody(opened.response.body);
                } catch (error) {
                  read = unreadAnswer(context, error);
                }
                result = Buffer.isBuffer(read) ? passThroughWhole(context, wire.codec, read) : read;
              }
            } catch (error) {
              // Reading the answer failed in the gateway's own handling: the attempt ends before the error goes on.
              opened.attempt.threw();
              throw error;
            }
            outcome = verdictOf(opened.attempt, result);
          }
        }
      } finally {
        candidate.ticket.release();
      }
      if (outcome.kind === 'done') return outcome.value;
      candidate = pool.next(candidate, outcome);
      if (candidate instanceof Promise) candidate = await candidate;
    }
  } finally {
    pool.close();
    stop?.close();
  }
  return pool.exhausted('throw');
}

/** One channel record's part of the wire decision for a caller's wire and `stream`, with the last choice made from it. */
interface ChannelWire {
  readonly adapter: UpstreamAdapter;
  readonly wire: ClientWire;
  readonly stream: boolean;
  readonly operation: UpstreamOperation | null;
  /** The caller's pass-through part the choice was made for (a codec built per request gets a choice of its own). */
  forwarding: RequestedChat['codec']['passThrough'];
  choice: ChatWireChoice;
}

/**
 * The channel's part of the wire decision, kept per channel record: a record is replaced, never changed, when an
 * admin edits its channel, so an edited channel is decided again (and a deleted one's entry goes with it).
 */
const CHANNEL_WIRES = new WeakMap<Channel, ChannelWire[]>();

/** `chooseWire` for a chat, asking the channel's part once per channel record, caller's wire and `stream`. */
function wireOf(adapter: UpstreamAdapter, channel: Channel, requested: RequestedChat): ChatWireChoice {
  const { wire, passThrough } = requested.codec;
  let wires = CHANNEL_WIRES.get(channel);
  if (wires === undefined) CHANNEL_WIRES.set(channel, (wires = []));
  let known: ChannelWire | undefined;
  for (const entry of wires) {
    if (entry.adapter === adapter && entry.wire === wire && entry.stream === requested.stream) known = entry;
  }
  if (known === undefined) {
    const operation = channelPassThrough(adapter, channel, wire, requested);
    known = { adapter, wire, stream: requested.stream, operation, forwarding: passThrough, choice: chatWireOf(operation, requested) };
    wires.push(known);
  } else if (known.forwarding !== passThrough) {
    known.forwarding = passThrough;
    known.choice = chatWireOf(known.operation, requested);
  }
  return known.choice;
}

/** The caller's body for a same-protocol channel, else the canonical request in the channel's wire format. */
function buildUpstreamRequest(adapter: UpstreamAdapter, route: ChannelRoute, credential: string, request: ChatRelayRequest, wire: ChatWireChoice): UpstreamRequest {
  if (wire.kind === 'pass-through' && adapter.passThrough !== undefined) {
    const body = request.codec.wire.passThroughBody(request.body, route.upstreamModel, request.stream, request.callerBytes);
    const upstreamRequest = adapter.passThrough.build(route.channel, credential, wire.operation, route.upstreamModel, body);
    Object.assign(upstreamRequest.headers, request.clientHeaders);
    return upstreamRequest;
  }
  const chat = request.chat();
  const translated = { ...chat, stream: request.stream };
  const upstreamRequest = adapter.buildChatRequest(route.channel, credential, translated, route.upstreamModel);
  // What this channel left out is what the answer's header and usage row report.
  if (translated.droppedHostedTools !== undefined) chat.droppedHostedTools = translated.droppedHostedTools;
  return upstreamRequest;
}

/** Stopped before the upstream answered: the caller left, or the stream's stop gives the refusal a new request would get. */
function leftBeforeAnswer(request: ChatRelayRequest, callerGone: CallerSignal, stop: StreamStop | null): PoolOutcome<AnswerReport> {
  if (stop?.reason != null && !callerGone.aborted) throw stop.reason;
  return { kind: 'done', value: callerLeft(request) };
}

/** The upstream answered 2xx: its time to first byte and token charge are taken, and the answer's reading is set up. */
function answerContext(dependencies: RelayDependencies, request: ChatRelayRequest, opened: OpenedAttempt, signal: CallerSignal, stop: StreamStop | null): AnswerContext {
  const { attempt, response, adapter } = opened;
  attempt.answered();
  attempt.chargeTokens();
  // The first byte's time, for the time-to-first-byte histogram (the sink marks it for the usage row).
  const onFirstByte = (): void => {
    dependencies.metrics.timeToFirstByte.labels(request.family.name, request.stream ? 'true' : 'false').observe((performance.now() - request.sink.startedAt) / 1000);
  };
  const recorder = request.capture?.attempt(adapter, request.chat) ?? null;
  return { request, response, signal, onFirstByte, recorder, stop };
}

/** The attempt's verdict on how its answer was relayed, and whether the next channel may try. */
function verdictOf(attempt: UpstreamAttempt, result: RelayResult): PoolOutcome<AnswerReport> {
  switch (result.kind) {
    case 'success':
      attempt.succeeded(result.report);
      return { kind: 'done', value: result.report };
    case 'aborted':
    // Stopped by a change of the key or account: no verdict on the channel.
    case 'stopped':
      attempt.aborted();
      return { kind: 'done', value: result.report };
    case 'broken':
      attempt.failed(result.failureClass, null);
      return { kind: 'done', value: result.report };
    case 'refused':
      // The channel answered; the refusal is the gateway's.
      attempt.aborted();
      throw withReport(result.error, result.report);
    case 'retry':
      attempt.failedBeforeAnswer(result.failureClass, null);
      return { kind: 'failed', failure: { failureClass: result.failureClass, retryAfterMs: null } };
    default: {
      const unknown: never = result;
      throw new Error(`unhandled relay result ${String(unknown)}`);
    }
  }
}

/** The whole answer could not be read: the caller left, or the upstream failed mid-answer (the next channel may try). */
function unreadAnswer({ request, signal }: AnswerContext, error: unknown): RelayResult {
  if (signal.aborted) return aborted(request);
  return { kind: 'retry', failureClass: failureClassOf(error, true) };
}

/** A whole answer, read: price it, send it as one body. */
function passThroughWhole({ request, response, onFirstByte, recorder }: AnswerContext, forwarding: PassThroughCodec, read: Buffer): RelayResult {
  const { sink, codec, price } = request;
  let body = read;
  onFirstByte();
  // Read as the upstream wrote it (the model it names tells an OpenAI search model's search).
  const usage = forwarding.usageFromResponseBody(body);
  if (request.answeringModel !== undefined) body = answerNamingModel(codec.wire, body, request.answeringModel);
  if (forwarding.callerAnswer !== undefined && response.status === 200) body = forwarding.callerAnswer(body);
  const contentType = headerValue(response.headers['content-type']) ?? 'application/json';
  const cost = price.quoteUsd({ usage });
  sink.send({ status: response.status, body: answerWithCost(codec, body, cost), contentType, headers: Object.assign(request.responseHeaders, costHeader(cost)) });
  const answered = body;
  const report: AnswerReport = { status: response.status, usage, price, answer: readOnce(() => forwarding.answerFactsOfBody(answered)) };
  if (recorder !== null && response.status === 200) {
    recorder.rawBody(body);
    recorder.complete();
  }
  return { kind: 'success', report };
}

/** A streamed answer: events forwarded as they come, a preamble held until the upstream has accepted. */
async function passThroughStream({ request, response, signal, onFirstByte, recorder, stop }: AnswerContext, forwarding: PassThroughCodec): Promise<RelayResult> {
  const { sink, attempts, codec, price } = request;
  const splitter = new SseEventSplitter();
  // The event that completes the usage (OpenAI's usage chunk, Anthropic's message_delta, Gemini's closing chunk)
  // gets the cost of that usage from the observer.
  const observer = forwarding.createObserver(price);
  // Every attempt of the request streams the same content type.
  request.responseHeaders['content-type'] = codec.streamContentType();
  const client = sink.openStream(request.responseHeaders, signal, onFirstByte);
  // The upstream accepted the request once an event other than an error arrived (a preamble counts).
  let accepted = false;
  const promptTokens = memoized(() => localPromptTokens(request));
  const delivered = new RunningTokenCount();
  const billedUsage = async (): Promise<Usage | null> => usageOfDelivered(passThroughAnswer(observer, delivered, accepted, promptTokens));
  request.checkpoint(price, async () => ({ usage: await billedUsage() }), () => ({ usage: usageAtFirstByte(observer.reportedUsage(), attempts.request.promptTokensEstimate) }));
  const stream: OpenStream = { request, response, client, signal, billedUsage, recorder, successCode: null, answer: () => observer.answerFacts() };
  // Events before the first answer event (preamble) are held, so an in-band error right after them is retried.
  let held: Buffer[] | null = [];
  try {
    for await (const chunk of response.body) {
      recorder?.rawChunk(chunk);
      const events = splitter.push(chunk);
      if (events.length === 0) continue;
      let forward: Buffer[] = [];
      for (let event of events) {
        if (!observer.observe(event)) continue;
        if (forwarding.callerStreamEvent !== undefined) event = forwarding.callerStreamEvent(event);
        event = observer.priced(event);
        if (held !== null) {
          const opening = observer.opening(event);
          if (opening.kind === 'error' && (opening.status >= 500 || opening.status === 429)) {
            response.discard();
            return { kind: 'retry', failureClass: opening.status === 429 ? 'throttled' : 'stream_error' };
          }
          if (opening.kind !== 'error') accepted = true;
          if (opening.kind === 'preamble') {
            held.push(event);
            continue;
          }
          forward = held;
          held = null;
        }
        forward.push(event);
      }
      if (forward.length > 0) await client.write(forward.length === 1 ? (forward[0] as Buffer) : Buffer.concat(forward));
    }
    const rest = splitter.flush();
    const last = rest !== null && observer.observe(rest) ? [forwarding.callerStreamEvent?.(rest) ?? rest] : [];
    const tail = [...(held ?? []), ...last];
    // A stream the upstream closed with its own failure event reached the caller as is; the usage row says it failed.
    const failed = observer.failure?.() ?? null;
    return await endStream(stream, tail.length === 0 ? undefined : Buffer.concat(tail), failed === null ? null : { status: 502, code: 'upstream_error' });
  } catch (error) {
    if (stop?.reason != null && !signal.aborted) return await stopStream(stream, stop.reason);
    return await breakOffStream(stream, error, observer.completed() ? undefined : null);
  }
}

/** Every channel of a request with guardrails gets the canonical request, checked and masked. */
const GUARDED_WIRE: ChatWireChoice = { kind: 'translate' };

function passThroughAnswer(observer: PassThroughStreamObserver, delivered: RunningTokenCount, accepted: boolean, promptTokens: () => Promise<number>): DeliveredAnswer {
  return {
    reported: observer.reportedUsage(),
    final: observer.usageIsFinal(),
    accepted,
    deliveredTokens: () => {
      delivered.addEach(observer.takeDeliveredText());
      return delivered.total();
    },
    promptTokens,
  };
}

/** The answer's facts read once, for the attempt's span and the request's trace alike. */
function readOnce(read: () => AnswerFacts): () => AnswerFacts {
  let facts: AnswerFacts | null = null;
  return () => (facts ??= read());
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
