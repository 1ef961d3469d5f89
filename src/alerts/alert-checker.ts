import type { Mailer } from '../mail/mailer.js';
import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import { BackgroundJob } from '../shared/background-job.js';
import type { AlertState } from '../storage/repositories/alert-repository.js';
import type { Storage } from '../storage/storage.js';
import { alertEvent } from './alert-event.js';
import { customerOfSubject, EVERY_CUSTOMER } from '../domain/customer-records.js';
import { alertIsMailed, composeAlertMail, type AlertMailContext } from './alert-mail.js';

export interface AlertCheckerOptions {
  /** Time between two checks (ALERT_CHECK_SECONDS). */
  intervalMs: number;
  /** Crossings claimed and mails sent per check at most, of each kind. */
  batch?: number;
  /** How long one instance owns a delivery; longer than the SMTP timeouts, so a slow send is never doubled. */
  leaseMs?: number;
  /** Longest wait between two delivery attempts of one alert. */
  maxRetryDelayMs?: number;
}

export interface AlertCheckResult {
  rearmed: number;
  claimed: number;
  sent: number;
  failed: number;
}

/** An idle instance checks at least once every this many check intervals. */
export const IDLE_ALERT_FACTOR = 20;
const DEFAULT_BATCH = 200;
const DEFAULT_LEASE_MS = 120_000;
const DEFAULT_MAX_RETRY_DELAY_MS = 3_600_000;

/** Wait before attempt `attempts + 1` after `attempts` failed: the check interval, doubled per failure, capped. */
export function alertRetryDelayMs(attempts: number, intervalMs: number, maxMs: number): number {
  const doublings = Math.min(Math.max(attempts - 1, 0), 30);
  return Math.min(intervalMs * 2 ** doublings, maxMs);
}

/**
 * Alerts off the hot path: every interval, on every instance,
 * 1. re-arms alerts whose value is back on the good side of its threshold (top-up, quota raised, new period);
 * 2. finds subjects past their threshold and claims each crossing with one conditional upsert, so exactly one
 *    instance owns it;
 * 3. delivers due alerts (a webhook event in the outbox, and a mail unless the account turned them off): each under a lease taken by a conditional UPDATE, marked notified once the mail server
 *    accepted it, retried with backoff when it did not. A mail is neither lost nor sent twice (one exception: a
 *    process that dies between the server's acceptance and the mark sends it again after the lease).
 */
export class AlertChecker {
  readonly #job = new BackgroundJob(() => this.#check());
  readonly #batch: number;
  readonly #leaseMs: number;
  readonly #maxRetryDelayMs: number;

  constructor(
    private readonly storage: Storage,
    private readonly mailer: Mailer,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: AlertCheckerOptions,
  ) {
    this.#batch = options.batch ?? DEFAULT_BATCH;
    this.#leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.#maxRetryDelayMs = options.maxRetryDelayMs ?? DEFAULT_MAX_RETRY_DELAY_MS;
  }

  /**
   * Checks every `intervalMs` while checks find something to do; while they find nothing, less often, up to
   * IDLE_ALERT_FACTOR times the interval. Money moving on this instance (a charge, a credit, a lease) brings the
   * next check back within the interval; an instance where no money moves has nothing to cross a threshold.
   */
  start(): void {
    this.#job.start({
      name: 'alerts', baseMs: this.options.intervalMs, maxMs: this.options.intervalMs * IDLE_ALERT_FACTOR, logger: this.logger,
      found: (result) => result.rearmed + result.claimed + result.sent + result.failed > 0,
      wakeOn: { kind: 'money', how: 'soon' },
    });
  }

  /** Stops the schedule and waits for a check in progress. */
  stop(): Promise<void> {
    return this.#job.stop();
  }

  /** One check; a call while another runs joins it instead of overlapping. Never throws (failures are logged). */
  check(): Promise<AlertCheckResult> {
    return this.#job.run();
  }

  async #check(): Promise<AlertCheckResult> {
    const result: AlertCheckResult = { rearmed: 0, claimed: 0, sent: 0, failed: 0 };
    try {
      const now = this.clock.now();
      result.rearmed = await this.storage.alerts.rearm(now);
      for (const crossing of await this.storage.alerts.findCrossings(now, this.#batch)) {
        if (await this.storage.alerts.claim(crossing, now)) result.claimed += 1;
      }
      for (const alert of await this.storage.alerts.listDue(this.clock.now(), this.#batch)) {
        const outcome = await this.#deliver(alert);
        if (outcome === 'sent') result.sent += 1;
        else if (outcome === 'failed') result.failed += 1;
      }
    } catch (error) {
      this.logger.warn('alert check failed; next check retries', describeError(error));
    }
    return result;
  }

  async #deliver(alert: AlertState): Promise<'sent' | 'failed' | 'skipped'> {
    const now = this.clock.now();
    if (!(await this.storage.alerts.lease(alert, now + this.#leaseMs, now))) return 'skipped';
    const attempts = alert.attempts + 1;
    const fields = { kind: alert.kind, accountId: alert.accountId, subjectId: alert.subjectId, attempts };
    try {
      const context = await this.#context(alert);
      if (context === null) {
        // The account is gone: nobody to tell. Mark it so it is not retried forever.
        await this.storage.alerts.markNotified(alert, attempts, this.clock.now());
        return 'skipped';
      }
      // The account's webhook and Slack endpoints subscribed to the alert hear of it through the outbox (recorded
      // once however often this attempt is repeated); the mail goes unless the account turned alert mails off.
      await this.storage.webhooks.recordEvent(alertEvent(alert, context, this.clock.now()));
      const mailed = alertIsMailed(alert.kind) && await this.storage.webhooks.alertMail(alert.accountId);
      if (mailed) await this.mailer.send(composeAlertMail(alert, context));
      await this.storage.alerts.markNotified(alert, attempts, this.clock.now());
      this.logger.info(mailed ? 'alert mail sent' : 'alert recorded (mail turned off)', { ...fields, via: mailed ? this.mailer.kind : 'webhooks' });
      return 'sent';
    } catch (error) {
      const delayMs = alertRetryDelayMs(attempts, this.options.intervalMs, this.#maxRetryDelayMs);
      const described = describeError(error);
      this.logger.warn('alert mail failed; will retry', { ...fields, retryInSeconds: Math.ceil(delayMs / 1000), ...described });
      try {
        const at = this.clock.now();
        await this.storage.alerts.markFailed(alert, attempts, at + delayMs, String(described.errorCode ?? described.errorName), at);
      } catch (markError) {
        // The lease runs out instead; the mail is retried then.
        this.logger.warn('could not record a failed alert mail', describeError(markError));
      }
      return 'failed';
    }
  }

  async #context(alert: AlertState): Promise<AlertMailContext | null> {
    const account = await this.storage.accounts.getById(alert.accountId);
    if (account === null) return null;
    switch (alert.kind) {
      case 'balance':
        return { email: account.email };
      case 'key_quota':
      case 'key_paused':
      case 'key_budget_paused': {
        const key = await this.storage.keys.getById(alert.subjectId);
        if (key === null) return { email: account.email };
        return { email: account.email, key: { name: key.name, hint: key.displayHint, ...(key.budget === null ? {} : { budgetPeriod: key.budget.period }) } };
      }
      case 'subscription_quota': {
        const subscription = await this.storage.subscriptions.getById(alert.subjectId);
        const plan = subscription === null ? null : await this.storage.plans.getById(subscription.planId);
        if (subscription === null || plan === null) return { email: account.email };
        return { email: account.email, subscription: { planName: plan.name, periodStart: subscription.currentPeriodStart, periodEnd: subscription.currentPeriodEnd } };
      }
      case 'project_budget': {
        const project = await this.storage.projects.getById(alert.subjectId);
        if (project === null || project.accountId !== alert.accountId) return { email: account.email };
        return { email: account.email, project: { name: project.name }, ...(project.budget === null ? {} : { budgetPeriod: project.budget.period }) };
      }
      case 'customer_budget': {
        const { customer } = customerOfSubject(alert.subjectId);
        const rules = await this.storage.customers.listRules(alert.accountId);
        // The customer's own rule, else the rule of every customer: the one whose budget it crossed.
        const rule = rules.find((candidate) => candidate.customer === customer) ?? rules.find((candidate) => candidate.customer === EVERY_CUSTOMER);
        return { email: account.email, customer, ...(rule?.budget == null ? {} : { budgetPeriod: rule.budget.period }) };
      }
      default: {
        const unknown: never = alert.kind;
        throw new TypeError(`unknown alert kind ${String(unknown)}`);
      }
    }
  }
}
