import { formatUsdText } from '../billing/money-text.js';
import type { MailMessage } from '../mail/mailer.js';
import type { BudgetPeriod } from '../domain/records.js';
import type { AlertState } from '../storage/repositories/alert-repository.js';

/** What the mail names besides the numbers stored with the alert. */
export interface AlertMailContext {
  email: string;
  /** key kinds: the key's name and hint (never the key), and its budget's period when it has a budget. */
  key?: { name: string; hint: string; budgetPeriod?: BudgetPeriod };
  /** subscription_quota: the plan and the period. */
  subscription?: { planName: string; periodStart: number; periodEnd: number };
  /** project_budget: the project's name; project and customer budgets: the budget's period. */
  project?: { name: string };
  budgetPeriod?: BudgetPeriod;
  /** customer_budget: the end customer, as the account's requests name it. */
  customer?: string;
}

const usd = formatUsdText;

function day(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 10);
}

/** Whether alerts of this kind are mailed (a paused key is told to the account's webhooks only). */
export function alertIsMailed(kind: AlertState['kind']): boolean {
  return kind !== 'key_paused' && kind !== 'key_budget_paused';
}

/** The alert mail: plain text with the figures of the crossing. No secrets: keys appear by name and hint only. */
export function composeAlertMail(alert: AlertState, context: AlertMailContext): MailMessage {
  const footer = '\n\nYou receive this mail once per crossing; the alert re-arms when the value is back on the other side of the threshold.\n';
  switch (alert.kind) {
    case 'balance':
      return {
        to: context.email,
        subject: `Balance alert: funds left ${usd(alert.valueNano)}, below ${usd(alert.thresholdNano)}`,
        text: `The funds left on your account ${context.email} (balance plus credit line) dropped to ${usd(alert.valueNano)}, `
          + `below your alert threshold of ${usd(alert.thresholdNano)}.\nTop up to keep your requests from being refused.${footer}`,
      };
    case 'key_quota': {
      const key = context.key === undefined ? 'an API key' : `API key "${context.key.name === '' ? context.key.hint : context.key.name}" (${context.key.hint})`;
      return {
        to: context.email,
        subject: `Quota alert: ${key} reached ${alert.percent ?? 0}% of its quota`,
        text: `${key} of your account ${context.email} has spent ${usd(alert.valueNano)} of its ${usd(alert.limitNano ?? 0n)} quota `
          + `(alert at ${alert.percent ?? 0}%, ${usd(alert.thresholdNano)}).\nThe key is paused when its quota is used up; raise the quota to keep it running.${footer}`,
      };
    }
    case 'key_paused':
    case 'key_budget_paused':
      throw new TypeError('a paused key is told to webhooks, not mailed');
    case 'subscription_quota': {
      const plan = context.subscription === undefined ? 'your subscription' : `your "${context.subscription.planName}" subscription`;
      const period = context.subscription === undefined ? 'this period' : `the period ${day(context.subscription.periodStart)} to ${day(context.subscription.periodEnd)}`;
      return {
        to: context.email,
        subject: `Quota alert: ${plan} reached ${alert.percent ?? 0}% of this period's quota`,
        text: `${plan.charAt(0).toUpperCase()}${plan.slice(1)} on account ${context.email} has used ${usd(alert.valueNano)} of its ${usd(alert.limitNano ?? 0n)} quota `
          + `in ${period} (alert at ${alert.percent ?? 0}%, ${usd(alert.thresholdNano)}).${footer}`,
      };
    }
    case 'project_budget':
    case 'customer_budget': {
      const subject = alert.kind === 'project_budget'
        ? `Project "${context.project?.name ?? alert.subjectId}"`
        : `End customer "${context.customer ?? alert.subjectId}"`;
      const period = context.budgetPeriod ?? 'period';
      return {
        to: context.email,
        subject: `Budget alert: ${subject} reached ${alert.percent ?? 0}% of its ${period} budget`,
        text: `${subject} of your account ${context.email} has spent ${usd(alert.valueNano)} of its ${usd(alert.limitNano ?? 0n)} budget `
          + `for the ${period} starting ${day(alert.periodStart)} (alert at ${alert.percent ?? 0}%, ${usd(alert.thresholdNano)}).\n`
          + `Requests past the budget are refused until the ${period} ends; raise the budget to keep them going.${footer}`,
      };
    }
    default: {
      const unknown: never = alert.kind;
      throw new TypeError(`unknown alert kind ${String(unknown)}`);
    }
  }
}
