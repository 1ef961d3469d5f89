import type { AttemptOutcome } from '../metrics/gateway-metrics.js';
import type { UpstreamFailureClass } from '../routing/failure-class.js';
import type { Candidate, RoutePlan } from '../routing/route-plan.js';
import { describeError } from '../shared/logger.js';
import type { RelayDependencies } from './relay-dependencies.js';
import type { RequestMeter } from './request-meter.js';

/**
 * One attempt of a request on one channel, from its start to its single verdict. The verdict goes to the
 * channel's breakers (through the ticket), the metrics, the key rotation (a rejected key) and the log; the usage
 * row learns which channels were tried.
 */
export class UpstreamAttempt {
  #tokensOnMeter = false;

  constructor(
    private readonly dependencies: RelayDependencies,
    readonly candidate: Candidate,
    readonly credential: string,
    private readonly requestId: string,
    private readonly meter: RequestMeter | null,
  ) {
    const channel = candidate.route.channel;
    if (meter !== null) {
      meter.attempts += 1;
      meter.channelId = channel.id;
      meter.attemptedChannels.push(channel.id);
    }
    if (candidate.attempt > 1) dependencies.metrics.retries.inc();
  }

  /** The upstream's response head arrived: the channel-model's time to first byte, for least-latency balancing. */
  answered(): void {
    this.candidate.ticket.answered();
  }

  /** The upstream answered; its channel-model TPM charge is now corrected with the request's real usage. */
  chargeTokensToMeter(): void {
    const charge = this.candidate.tokenCharge;
    if (charge === null || this.meter === null || this.#tokensOnMeter) return;
    this.meter.tokenCharge ??= { rules: [], chargedAt: charge.chargedAt };
    this.meter.tokenCharge.rules.push({ rule: charge.rule, charged: charge.estimate });
    this.#tokensOnMeter = true;
  }

  succeeded(): void {
    this.candidate.ticket.succeeded();
    this.#count('success');
  }

  failed(failureClass: UpstreamFailureClass, retryAfterMs: number | null): void {
    const { route, ticket } = this.candidate;
    const { credentials } = this.dependencies;
    if (failureClass === 'credential') credentials.reportRejected(route.channel, this.credential);
    // A rejected key is the rotation's business while the channel has other keys; with none left, the channel's.
    if (failureClass === 'credential' && credentials.hasUsableKey(route.channel)) ticket.release();
    else ticket.failed({ failureClass, retryAfterMs });
    this.#count('failure');
    this.dependencies.metrics.upstreamErrors.labels(route.channel.name, failureClass).inc();
    this.dependencies.logger.warn('upstream attempt failed', { requestId: this.requestId, channelId: route.channel.id, attempt: this.candidate.attempt, failureClass });
  }

  /** A failure before anything reached the caller: the next channel tries, and the TPM taken here is given back. */
  failedBeforeAnswer(failureClass: UpstreamFailureClass, retryAfterMs: number | null): void {
    this.failed(failureClass, retryAfterMs);
    this.#refundTokens();
  }

  /** The upstream refused the caller's request (its 4xx): no verdict on the channel. */
  refused(): void {
    this.candidate.ticket.release();
    this.#count('refused');
  }

  /** The caller left: no verdict on the channel. */
  aborted(): void {
    this.candidate.ticket.release();
    this.#count('aborted');
  }

  #count(outcome: AttemptOutcome): void {
    this.dependencies.metrics.upstreamAttempts.labels(this.candidate.route.channel.name, outcome).inc();
  }

  #refundTokens(): void {
    const charge = this.candidate.tokenCharge;
    if (charge === null) return;
    if (this.#tokensOnMeter && this.meter?.tokenCharge != null) {
      const rules = this.meter.tokenCharge.rules;
      const index = rules.findIndex((entry) => entry.rule === charge.rule);
      if (index >= 0) rules.splice(index, 1);
      this.#tokensOnMeter = false;
    }
    this.dependencies.routing.limiter.adjust(charge.rule, -charge.estimate, charge.chargedAt).catch((error: unknown) => {
      this.dependencies.logger.warn('channel-model token limit refund failed', describeError(error));
    });
  }
}

/** After a rejected key, the same channel with its next key, when it has one left. */
export function anotherKey(dependencies: RelayDependencies, plan: RoutePlan, candidate: Candidate): Candidate | null {
  return dependencies.credentials.hasUsableKey(candidate.route.channel) ? plan.again(candidate) : null;
}
