import type { ChatRequest } from '../ir/chat-request.js';
import type { RerankRequest } from '../ir/rerank.js';
import type { ChannelRoute } from '../routing/catalog.js';
import type { UpstreamFailureClass } from '../routing/failure-class.js';
import type { Channel } from '../domain/records.js';
import type { ModelKind } from '../domain/model-records.js';
import type { RelayDependencies } from './relay-dependencies.js';
import { callUpstream, failureClassOf, readWholeBody, timeoutsOf } from './upstream-call.js';
import { UpstreamAttempt } from './upstream-attempt.js';
import type { CallerSignal } from './caller-signal.js';

/** The longest a test waits for the upstream's first byte, and between body chunks. */
const TEST_TIMEOUT_MS = 30_000;

export interface ChannelTestResult {
  ok: boolean;
  /** success: a valid answer; failure: the channel failed (see failureClass); refused: the upstream answered 4xx. */
  outcome: 'success' | 'failure' | 'refused' | 'aborted';
  model: string;
  upstreamModel: string;
  latencyMs: number;
  /** The upstream's HTTP status, when it answered. */
  upstreamStatus: number | null;
  failureClass: UpstreamFailureClass | null;
  /** What happened, in the gateway's words (never the upstream's body, URL or key). */
  message: string;
}

/** The test request of a rerank-only channel, or of a rerank model: one document. */
const PING_RERANK: RerankRequest = { model: 'ping', query: 'ping', documents: ['ping'], returnDocuments: false };

export interface ChannelTestOptions {
  /** Names the attempt in the log (background probes say so). */
  logLabel?: string;
  /** The tested model's kind: a rerank model is tested with a rerank, whatever else its channel's upstream serves. */
  modelKind?: ModelKind;
}

/**
 * A 1-token chat to one channel, on demand (POST /admin/channels/:id/test), or the smallest rerank when the model is
 * a rerank model or the upstream serves no chat. It goes through the channel's breakers even when they are open, and
 * its verdict feeds them like any request's: a passing test closes an open breaker. The answer reports latency and
 * outcome only. Background health probes send the same request.
 */
export async function testChannel(dependencies: RelayDependencies, channel: Channel, model: string, upstreamModel: string, signal: CallerSignal, options: ChannelTestOptions = {}): Promise<ChannelTestResult> {
  const logLabel = options.logLabel ?? 'admin-channel-test';
  const adapter = dependencies.adapters.get(channel.type);
  const result = (outcome: ChannelTestResult['outcome'], latencyMs: number, upstreamStatus: number | null, failureClass: UpstreamFailureClass | null, message: string): ChannelTestResult => ({
    ok: outcome === 'success', outcome, model, upstreamModel, latencyMs, upstreamStatus, failureClass, message,
  });
  if (adapter === undefined) return result('failure', 0, null, 'unavailable', `Channel type '${channel.type}' is not supported by this gateway.`);
  const route: ChannelRoute = { channel, upstreamModel };
  const chat: ChatRequest = { model, system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'ping' }] }], stream: false, maxOutputTokens: 1, extensions: {}, warnings: [] };
  const credential = dependencies.credentials.next(channel);
  // A test goes through open breakers, and its verdict counts like any attempt's.
  const ticket = dependencies.routing.health.force(channel, model);
  const attempt = new UpstreamAttempt(dependencies, { route, ticket, attempt: 1, tokenCharge: null }, credential, logLabel, null);
  const configured = timeoutsOf(route, false);
  const timeouts = { firstByteMs: Math.min(configured.firstByteMs, TEST_TIMEOUT_MS), idleMs: Math.min(configured.idleMs, TEST_TIMEOUT_MS) };
  const startedAt = performance.now();
  const elapsed = (): number => Math.round(performance.now() - startedAt);
  const failed = (failureClass: UpstreamFailureClass, status: number | null, message: string, retryAfterMs: number | null = null): ChannelTestResult => {
    attempt.failed(failureClass, retryAfterMs);
    return result('failure', elapsed(), status, failureClass, message);
  };
  const cancelled = (): ChannelTestResult => {
    attempt.aborted();
    return result('aborted', elapsed(), null, null, 'The test was cancelled.');
  };
  try {
    // A rerank model, and any model of an upstream that serves no chat, is tested with the smallest rerank instead.
    const reranks = options.modelKind === 'rerank' || adapter.servesChat === false;
    const rerank = reranks ? adapter.rerank : undefined;
    const request = rerank === undefined ? (reranks ? null : adapter.buildChatRequest(channel, credential, chat, upstreamModel)) : rerank.build(channel, credential, PING_RERANK, upstreamModel);
    if (request === null) return result('failure', 0, null, 'unavailable', `This channel (type '${channel.type}') serves no rerank${adapter.servesChat === false ? ' nor chat' : ''}.`);
    const outcome = await callUpstream(adapter, route, request, { signal, timeouts, now: dependencies.routing.clock.now() });
    switch (outcome.kind) {
      case 'aborted':
        return cancelled();
      case 'refused':
        attempt.refused();
        return result('refused', elapsed(), outcome.status, null, `The upstream answered but refused the test request (HTTP ${outcome.status}); the channel is reachable and its key accepted.`);
      case 'retry':
        return failed(outcome.failureClass, outcome.status, `The channel failed: ${outcome.failureClass.replace(/_/g, ' ')}.`, outcome.retryAfterMs);
      case 'response': {
        try {
          const body = await readWholeBody(outcome.response.body);
          if (rerank === undefined) adapter.parseChatResponse(body, chat);
          else rerank.parse(body, PING_RERANK);
        } catch (error) {
          if (signal.aborted) return cancelled();
          const failureClass = failureClassOf(error, true);
          return failed(failureClass, outcome.response.status, `The channel's answer was unusable: ${failureClass.replace(/_/g, ' ')}.`);
        }
        attempt.succeeded();
        return result('success', elapsed(), outcome.response.status, null, 'The channel answered.');
      }
      default: {
        const unknown: never = outcome;
        throw new Error(`unhandled outcome ${String(unknown)}`);
      }
    }
  } finally {
    ticket.release();
  }
}
