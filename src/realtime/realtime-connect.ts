import type { RawData, WebSocket } from 'ws';
import type { RequestContext } from '../http/request-context.js';
import { DEFAULT_OUTPUT_TOKENS_RESERVED } from '../billing/reservation-amount.js';
import type { RelayDependencies } from '../relay/relay-dependencies.js';
import type { AttemptLog } from '../relay/attempt-log.js';
import { UpstreamAttempt } from '../relay/upstream-attempt.js';
import { exhaustedError, type FailedAttempt } from '../relay/upstream-call.js';
import { callerErrorFromUpstream } from '../relay/upstream-error.js';
import type { ChannelRoute } from '../routing/catalog.js';
import { RoutePlan } from '../routing/route-plan.js';
import type { UpstreamOpening } from './realtime-upstream.js';

/** A session whose upstream is open. */
export interface Connected {
  upstream: WebSocket;
  /** What the upstream sent before the session took the socket (OpenAI's `session.created`, Gemini's `setupComplete`). */
  early: Array<{ data: RawData; binary: boolean }>;
  route: ChannelRoute;
}

/** Opens one channel's upstream socket; null when the channel cannot serve this protocol (it is skipped). */
export type OpenChannel = (route: ChannelRoute, credential: string) => { url: string; opening: Promise<UpstreamOpening> } | null;

/**
 * Opens the upstream socket on the first channel that takes it, in routing order, within the routing's bounds: a
 * failure the next channel may not share (credential, throttling, server error, timeout) moves on, a refusal of what
 * the caller asked ends the attempt with that refusal. Every attempt is on the request's attempt log and the channel's health.
 */
export async function connectUpstream(relay: RelayDependencies, context: RequestContext, attempts: AttemptLog, modelId: string, routes: readonly ChannelRoute[], open: OpenChannel): Promise<Connected> {
  const plan = new RoutePlan(relay.routing, routes, modelId, DEFAULT_OUTPUT_TOKENS_RESERVED);
  const failures: FailedAttempt[] = [];
  for (let candidate = await plan.next(); candidate !== null; candidate = await plan.next()) {
    try {
      const credential = relay.credentials.next(candidate.route.channel);
      const started = open(candidate.route, credential);
      if (started === null) {
        plan.skip(candidate);
        continue;
      }
      const attempt = new UpstreamAttempt(relay, candidate, credential, context.requestId, attempts);
      attempt.sending(started.url);
      const opening = await started.opening;
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
