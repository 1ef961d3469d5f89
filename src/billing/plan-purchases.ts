import type { CommerceConfig } from '../config/commerce-config.js';
import { GatewayError } from '../errors/gateway-error.js';
import { buyerParty, planPeriodInvoiceDraft } from '../invoices/invoice-drafts.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { describeError, type Logger } from '../shared/logger.js';
import { BackgroundJob } from '../shared/background-job.js';
import type { AccountFunds, PlanPurchaseTransaction } from '../storage/repositories/plan-purchase-repository.js';
import type { NanoUsd, Plan, Subscription } from '../domain/records.js';
import type { Storage, SubscriptionPatch } from '../storage/storage.js';
import type { Ledger } from './ledger.js';
import { nanoToDecimalString } from './money.js';
import { planChange } from './subscription-changes.js';
import { currentPeriod } from './subscription-period.js';
import { webhookEvent } from '../domain/webhook-events.js';
import { moneyFields } from '../webhooks/webhook-money.js';
import type { SubscriptionBook } from './subscription-book.js';

const NANO_PER_CENT = 10_000_000n;
/** A renewal is bought this long before the paid period ends, so the next period starts paid. */
export const RENEW_AHEAD_MS = 3_600_000;
const RENEWAL_BATCH = 100;

export interface PlanPurchaseResult {
  subscription: Subscription;
  plan: Plan;
  chargedNano: NanoUsd;
  invoiceId: string | null;
}

export interface RenewalResult {
  renewed: number;
  refused: number;
  lapsed: number;
}

interface Payment {
  subscriptionId: string;
  amountNano: NanoUsd;
  plan: Plan;
  periodStart: number;
  periodEnd: number;
  /** Invoice source: one invoice per source, so a period is never invoiced twice. */
  source: string;
  upgrade: boolean;
}

/**
 * What an account can still pay for a plan: never more than its balance (a plan is paid from prepaid credit, not
 * the credit line), and never so much that the wallet's holds (requests in flight, leases) would pass its funds.
 */
export function spendableForPlan(funds: AccountFunds): NanoUsd {
  const besideHolds = funds.balanceNano + funds.creditLineNano - funds.heldNano;
  const spendable = besideHolds < funds.balanceNano ? besideHolds : funds.balanceNano;
  return spendable < 0n ? 0n : spendable;
}

const isLive = (subscription: Subscription, now: number): boolean =>
  subscription.status === 'active' && (subscription.cancelAt === null || subscription.cancelAt > now);

/**
 * Plans an account chooses itself in the console, paid period by period from its prepaid balance.
 *
 * A bought subscription stops at the end of its paid period (`paidThrough`, also its `cancelAt`) unless the next
 * period is bought: so no period is ever used unpaid. Choosing a plan while a bought subscription is live changes
 * that subscription with the admin API's plan-change rule; otherwise a new subscription starts now. Each payment is
 * a `subscription` ledger entry with its source, the subscription's change and the period's invoice, written in one
 * transaction under the account's lock; a balance too short for it changes nothing.
 */
export class PlanPurchases {
  readonly #renewals = new BackgroundJob(() => this.#renewDue());

  constructor(
    private readonly storage: Storage,
    private readonly ledger: Ledger,
    private readonly book: SubscriptionBook,
    private readonly config: CommerceConfig,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Self-service plans, cheapest first (what the console offers). */
  async offered(): Promise<Plan[]> {
    const plans: Plan[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 100; pages += 1) {
      const page = await this.storage.plans.list({ limit: 100, after });
      plans.push(...page.data.filter((plan) => plan.selfService));
      if (page.nextCursor === null) break;
      after = page.nextCursor;
    }
    return plans.sort((left, right) => (left.priceNano < right.priceNano ? -1 : left.priceNano > right.priceNano ? 1 : left.name.localeCompare(right.name)));
  }

  /** Subscribes the account to a self-service plan, or changes its bought subscription to it. */
  async choose(accountId: string, planId: string): Promise<PlanPurchaseResult> {
    const plan = await this.storage.plans.getById(planId);
    if (plan === null || !plan.selfService) throw new GatewayError('not_found', `No plan with id '${planId}' is offered in the console.`);
    const account = await this.storage.accounts.getById(accountId);
    if (account === null || account.status !== 'enabled') throw new GatewayError('conflict', 'This account cannot buy a plan (it is disabled or deleted).');
    // This instance's idle lease on the wallet goes back first, so the funds read below are what is really free.
    await this.ledger.releaseWalletLease(accountId);
    const bought = await this.#liveBought(accountId);
    const from = bought === null ? null : await this.storage.plans.getById(bought.planId);
    const result = await this.storage.planPurchases.transact(accountId, async (transaction) => {
      const now = this.clock.now();
      const current = bought === null ? null : await transaction.subscription(bought.id);
      if (current !== null && from !== null && isLive(current, now) && current.planId === bought?.planId) {
        if (current.planId === plan.id) throw new GatewayError('conflict', `The account is on plan '${plan.name}' already.`);
        return this.#change(transaction, current, from, plan, account.email, now);
      }
      if ((await transaction.subscriptions(accountId)).some((subscription) => subscription.paidThrough !== null && isLive(subscription, now) && subscription.id !== bought?.id)) {
        throw new GatewayError('conflict', 'The account\'s plan changed meanwhile; reload and choose again.');
      }
      return this.#start(transaction, accountId, plan, account.email, now);
    });
    this.#forget(result.subscription);
    return result;
  }

  /**
   * Runs `renewDue` every `intervalMs` (on every instance: the account lock and the period's invoice source keep it
   * once). The interval is fixed: periods fall due with time, and one that ends unpaid lapses at the next run.
   */
  start(intervalMs: number): void {
    this.#renewals.start({
      name: 'plan renewals',
      baseMs: intervalMs,
      maxMs: intervalMs,
      firstPassAfterMs: intervalMs,
      found: (result) => result.renewed + result.refused + result.lapsed > 0,
      logger: this.logger,
    });
  }

  stop(): Promise<void> {
    return this.#renewals.stop();
  }

  /**
   * Buys the next period of every renewing subscription whose paid period ends within the hour. A balance too
   * short is retried at every run until the period ends; then the subscription lapses (it stopped at `cancelAt`).
   * Never throws (failures are logged).
   */
  renewDue(): Promise<RenewalResult> {
    return this.#renewals.run();
  }

  async #renewDue(): Promise<RenewalResult> {
    const result: RenewalResult = { renewed: 0, refused: 0, lapsed: 0 };
    try {
      const due = await this.storage.planPurchases.listRenewalsDue(this.clock.now() + RENEW_AHEAD_MS, RENEWAL_BATCH);
      for (const subscription of due) {
        const outcome = await this.#renewOne(subscription).catch((error: unknown) => {
          this.logger.warn('plan renewal failed; the next run retries', { subscription: subscription.id, account: subscription.accountId, ...describeError(error) });
          return 'failed' as const;
        });
        if (outcome === 'renewed') result.renewed += 1;
        else if (outcome === 'refused') result.refused += 1;
        else if (outcome === 'lapsed') result.lapsed += 1;
      }
    } catch (error) {
      this.logger.warn('plan renewal run failed; the next run retries', describeError(error));
    }
    return result;
  }

  async #renewOne(due: Subscription): Promise<'renewed' | 'refused' | 'lapsed' | 'skipped'> {
    const plan = await this.storage.plans.getById(due.planId);
    const account = await this.storage.accounts.getById(due.accountId);
    if (plan === null || account === null) return 'skipped';
    await this.ledger.releaseWalletLease(due.accountId);
    const outcome = await this.storage.planPurchases.transact(due.accountId, async (transaction) => {
      const now = this.clock.now();
      const subscription = await transaction.subscription(due.id);
      // Renewed or changed by another instance or the account meanwhile.
      if (subscription === null || subscription.paidThrough !== due.paidThrough || subscription.planId !== due.planId || !subscription.renews || subscription.status !== 'active') return 'skipped';
      const paidThrough = subscription.paidThrough ?? now;
      if (paidThrough <= now) {
        // Its paid period is over: it stopped at `cancelAt`, which is `paidThrough`.
        await transaction.updateSubscription(subscription.id, { renews: false, status: 'cancelled', cancelAt: Math.min(paidThrough, subscription.cancelAt ?? paidThrough) }, now);
        await transaction.recordEvent(webhookEvent('plan.ended', `${subscription.id}:${paidThrough}`, subscription.accountId, {
          subscription_id: subscription.id, plan_id: plan.id, plan_name: plan.name, ended_at: new Date(paidThrough).toISOString(),
        }, now));
        return 'lapsed';
      }
      // A disabled or deleted account buys nothing; it is retried until the paid period ends.
      if (account.status !== 'enabled') return 'refused';
      const period = currentPeriod(subscription.startsAt, plan.period, paidThrough);
      const payment: Payment = { subscriptionId: subscription.id, amountNano: plan.priceNano, plan, periodStart: period.start, periodEnd: period.end, source: `plan:${subscription.id}:${period.start}`, upgrade: false };
      if (!(await this.#canPay(transaction, subscription.accountId, payment.amountNano))) return 'refused';
      await this.#pay(transaction, subscription.accountId, payment, account.email, now);
      await transaction.updateSubscription(subscription.id, { paidThrough: period.end, cancelAt: period.end }, now);
      await transaction.recordEvent(webhookEvent('plan.renewed', `${subscription.id}:${period.start}`, subscription.accountId, {
        subscription_id: subscription.id, plan_id: plan.id, plan_name: plan.name,
        period_start: new Date(period.start).toISOString(), period_end: new Date(period.end).toISOString(), ...moneyFields('price', plan.priceNano),
      }, now));
      return 'renewed';
    });
    if (outcome === 'refused') this.logger.info('plan renewal refused: the balance is too short; retried until the period ends', { subscription: due.id, account: due.accountId });
    if (outcome !== 'skipped') this.#forget(due);
    return outcome;
  }

  async #liveBought(accountId: string): Promise<Subscription | null> {
    const now = this.clock.now();
    const subscriptions = await this.storage.subscriptions.listByAccount(accountId);
    return subscriptions.find((subscription) => subscription.paidThrough !== null && isLive(subscription, now)) ?? null;
  }

  async #start(transaction: PlanPurchaseTransaction, accountId: string, plan: Plan, email: string, now: number): Promise<PlanPurchaseResult> {
    const period = currentPeriod(now, plan.period, now);
    const subscription: Subscription = {
      id: newId('sub', now),
      accountId,
      planId: plan.id,
      status: 'active',
      startsAt: now,
      currentPeriodStart: period.start,
      currentPeriodEnd: period.end,
      usedNano: 0n,
      overageUsedNano: 0n,
      cancelAt: period.end,
      paidThrough: period.end,
      renews: true,
      createdAt: now,
      updatedAt: now,
    };
    const payment: Payment = { subscriptionId: subscription.id, amountNano: plan.priceNano, plan, periodStart: period.start, periodEnd: period.end, source: `plan:${subscription.id}:${period.start}`, upgrade: false };
    await this.#requireFunds(transaction, accountId, payment.amountNano);
    await transaction.createSubscription(subscription);
    const invoiceId = await this.#pay(transaction, accountId, payment, email, now);
    return { subscription, plan, chargedNano: payment.amountNano, invoiceId };
  }

  /**
   * The admin API's plan change. Another period length starts a new period now, paid in full; the same length
   * keeps the current period and what it used, and an upgrade pays the price difference for it. Nothing already
   * paid is refunded.
   */
  async #change(transaction: PlanPurchaseTransaction, current: Subscription, from: Plan, to: Plan, email: string, now: number): Promise<PlanPurchaseResult> {
    const change = planChange(current, from, to, now);
    const newPeriod = change.startsAt !== undefined;
    const periodStart = change.currentPeriodStart ?? current.currentPeriodStart;
    const periodEnd = change.currentPeriodEnd ?? current.currentPeriodEnd;
    const difference = to.priceNano - from.priceNano;
    const amountNano = newPeriod ? to.priceNano : difference > 0n ? difference : 0n;
    const entryId = newId('led', now);
    const payment: Payment = {
      subscriptionId: current.id, amountNano, plan: to, periodStart, periodEnd, upgrade: !newPeriod,
      source: newPeriod ? `plan:${current.id}:${periodStart}` : `plan-change:${current.id}:${entryId}`,
    };
    await this.#requireFunds(transaction, current.accountId, amountNano);
    const paidThrough = newPeriod ? periodEnd : current.paidThrough ?? periodEnd;
    const patch: SubscriptionPatch = { ...change, paidThrough, cancelAt: paidThrough, renews: true };
    const updated = await transaction.updateSubscription(current.id, patch, now);
    if (updated === null) throw new GatewayError('conflict', 'The subscription is gone; reload and choose again.');
    const invoiceId = await this.#pay(transaction, current.accountId, payment, email, now, entryId);
    return { subscription: updated, plan: to, chargedNano: amountNano, invoiceId };
  }

  async #canPay(transaction: PlanPurchaseTransaction, accountId: string, amountNano: NanoUsd): Promise<boolean> {
    if (amountNano === 0n) return true;
    const funds = await transaction.funds(accountId);
    return funds !== null && spendableForPlan(funds) >= amountNano;
  }

  async #requireFunds(transaction: PlanPurchaseTransaction, accountId: string, amountNano: NanoUsd): Promise<void> {
    if (amountNano === 0n) return;
    const funds = await transaction.funds(accountId);
    const spendable = funds === null ? 0n : spendableForPlan(funds);
    if (spendable < amountNano) {
      throw new GatewayError(
        'insufficient_balance',
        `This plan costs ${nanoToDecimalString(amountNano)} USD now, but only ${nanoToDecimalString(spendable)} USD of the balance is available. Top up, then choose the plan again; nothing was charged.`,
      );
    }
  }

  /** The payment's ledger entry and its invoice (none for a free period). Returns the invoice id. */
  async #pay(transaction: PlanPurchaseTransaction, accountId: string, payment: Payment, email: string, now: number, entryId = newId('led', now)): Promise<string | null> {
    if (payment.amountNano === 0n) return null;
    if ((await transaction.invoiceBySource(payment.source)) !== null) throw new GatewayError('conflict', 'This plan period is paid already.');
    await transaction.applyLedgerEntry({
      entryId,
      accountId,
      kind: 'subscription',
      amountNano: -payment.amountNano,
      reason: payment.source,
      createdAt: now,
    });
    const profile = await transaction.billingProfile(accountId);
    const invoice = await transaction.issueInvoice(planPeriodInvoiceDraft({
      id: newId('inv', now),
      accountId,
      source: payment.source,
      planName: payment.plan.name,
      periodStart: payment.periodStart,
      periodEnd: payment.periodEnd,
      amountCents: Number(payment.amountNano / NANO_PER_CENT),
      upgrade: payment.upgrade,
      config: this.config,
      buyer: buyerParty(profile, email),
      issuedAt: now,
    }));
    return invoice.id;
  }

  #forget(subscription: Subscription): void {
    this.ledger.forgetBalance(subscription.accountId);
    this.ledger.forgetSubscription(subscription.id);
    this.book.forget(subscription.accountId);
  }
}
