import type { WebhookConfig } from '../config/webhook-config.js';
import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import { BackgroundJob } from '../shared/background-job.js';
import type { DueDelivery, WebhookRepository } from '../storage/repositories/webhook-repository.js';
import { retryDelayMs } from './retry-schedule.js';
import { slackText } from './slack-text.js';
import { webhookSignature } from './webhook-signature.js';
import type { WebhookSender } from './webhook-sender.js';

export interface DeliveryCheckResult {
  /** Due deliveries the check saw (some may have been taken by another instance meanwhile). */
  found: number;
  attempted: number;
  succeeded: number;
  failed: number;
}

/** Deliveries taken per check at most, and sent at once at most. */
const BATCH = 100;
const PARALLEL = 8;
/** Ended deliveries (and their log and events) are kept this long, then deleted in batches, at most once an hour. */
const KEEP_ENDED_MS = 30 * 86_400_000;
const PRUNE_EVERY_MS = 3_600_000;
const PRUNE_BATCH = 1000;
/** A lease outlives the attempt's deadline by this much, so a slow attempt is never sent twice at once. */
const LEASE_MARGIN_MS = 30_000;

/**
 * Delivers the outbox, on every instance: due deliveries are leased one by one with a conditional UPDATE (so two
 * instances never send one attempt), sent with the event's id and body (the same on every attempt and resend),
 * signed with the endpoint's secrets, logged, and retried on the schedule (WEBHOOK_RETRY_SECONDS, retry-schedule.ts) until one answers 2xx
 * or the attempts run out.
 */
export class WebhookDeliverer {
  readonly #job = new BackgroundJob(() => this.#check());
  #prunedAt = 0;

  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly sender: WebhookSender,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly config: Pick<WebhookConfig, 'checkMs' | 'timeoutMs' | 'retrySeconds'>,
  ) {}

  /**
   * Checks every WEBHOOK_CHECK_MS while deliveries are due, less often while none are (up to the idle maximum), and
   * at once when an event or a resend is recorded in this process.
   */
  start(): void {
    this.#job.start({
      name: 'webhooks', baseMs: this.config.checkMs, logger: this.logger, found: (result) => result.found > 0, wakeOn: { kind: 'webhooks', how: 'nudge' },
    });
  }

  stop(): Promise<void> {
    return this.#job.stop();
  }

  /** One pass over the due deliveries; a call while one runs joins it. Never throws (failures are logged). */
  check(): Promise<DeliveryCheckResult> {
    return this.#job.run();
  }

  async #check(): Promise<DeliveryCheckResult> {
    const result: DeliveryCheckResult = { found: 0, attempted: 0, succeeded: 0, failed: 0 };
    try {
      const due = await this.webhooks.listDue(this.clock.now(), BATCH);
      result.found = due.length;
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < due.length) {
          const delivery = due[next] as DueDelivery;
          next += 1;
          const outcome = await this.#deliver(delivery);
          if (outcome === 'skipped') continue;
          result.attempted += 1;
          if (outcome === 'succeeded') result.succeeded += 1;
          else result.failed += 1;
        }
      };
      await Promise.all(Array.from({ length: Math.min(PARALLEL, due.length) }, worker));
      const now = this.clock.now();
      if (now - this.#prunedAt >= PRUNE_EVERY_MS) {
        this.#prunedAt = now;
        await this.webhooks.prune(now - KEEP_ENDED_MS, PRUNE_BATCH);
      }
    } catch (error) {
      this.logger.warn('webhook delivery check failed; the next check retries', describeError(error));
    }
    return result;
  }

  async #deliver(delivery: DueDelivery): Promise<'succeeded' | 'failed' | 'skipped'> {
    const now = this.clock.now();
    if (!(await this.webhooks.lease(delivery, now + this.config.timeoutMs + LEASE_MARGIN_MS, now))) return 'skipped';
    const attempt = delivery.attempts + 1;
    const body = delivery.format === 'slack' ? JSON.stringify({ text: slackText(delivery.body) }) : delivery.body;
    const timestamp = Math.floor(now / 1000);
    const sent = await this.sender.send({
      url: delivery.url,
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'unigate-webhooks/1',
        'webhook-id': delivery.eventId,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': webhookSignature(delivery.secrets, delivery.eventId, timestamp, body),
      },
    });
    const at = this.clock.now();
    const succeeded = sent.error === null;
    const delay = succeeded ? null : retryDelayMs(attempt, this.config.retrySeconds);
    const state = succeeded ? 'succeeded' : delay === null ? 'failed' : 'pending';
    const fields = { delivery: delivery.id, event: delivery.eventId, type: delivery.eventType, endpoint: delivery.endpointId, attempt, status: sent.statusCode, latency_ms: sent.latencyMs };
    if (succeeded) this.logger.info('webhook delivered', fields);
    else this.logger.warn(state === 'failed' ? 'webhook delivery failed for good' : 'webhook delivery failed; will retry', { ...fields, error: sent.error, retry_in_seconds: delay === null ? undefined : Math.ceil(delay / 1000) });
    try {
      await this.webhooks.finishAttempt(delivery.id, {
        attempt: { attempt, startedAt: now, statusCode: sent.statusCode, latencyMs: sent.latencyMs, error: sent.error, responseExcerpt: sent.responseExcerpt },
        state,
        nextAttemptAt: delay === null ? at : at + delay,
      }, at);
    } catch (error) {
      // The lease runs out instead and the attempt is made again: at least once, with the same event id.
      this.logger.warn('could not record a webhook attempt', describeError(error));
    }
    return succeeded ? 'succeeded' : 'failed';
  }
}
