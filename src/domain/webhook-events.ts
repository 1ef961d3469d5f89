import { createHash } from 'node:crypto';

/** Events an account's endpoints can subscribe to. */
export const ACCOUNT_EVENT_TYPES = [
  'key.disabled',
  'key.paused',
  'account.balance_low',
  'key.quota_threshold_crossed',
  'subscription.quota_threshold_crossed',
  'project.budget_threshold_crossed',
  'customer.budget_threshold_crossed',
  'topup.succeeded',
  'refund.created',
  'invoice.issued',
  'plan.renewed',
  'plan.ended',
  'webhook.test',
] as const;

/** Events the operator's endpoints can subscribe to (deployment-wide). */
export const OPERATOR_EVENT_TYPES = ['channel.down', 'channel.up', 'webhook.test'] as const;

export type AccountEventType = (typeof ACCOUNT_EVENT_TYPES)[number];

/**
 * Earlier names of events, still accepted in subscriptions and still matching endpoints subscribed by them: the
 * balance alert was `balance.threshold_crossed` before it took the operator contract's name.
 */
export const FORMER_EVENT_NAMES: Readonly<Record<string, AccountEventType>> = { 'balance.threshold_crossed': 'account.balance_low' };

/** Whether an endpoint subscribed to `types` hears of an event of `type` (an empty list: every event). */
export function subscribesTo(types: readonly string[], type: WebhookEventType): boolean {
  return types.length === 0 || types.some((subscribed) => subscribed === type || FORMER_EVENT_NAMES[subscribed] === type);
}
export type OperatorEventType = (typeof OPERATOR_EVENT_TYPES)[number];
export type WebhookEventType = AccountEventType | OperatorEventType;

/** An event about to be recorded in the outbox. `accountId` null: an operator event. */
export interface WebhookEventDraft {
  id: string;
  accountId: string | null;
  type: WebhookEventType;
  /** Metadata only: ids, names, integer amounts. Never prompt text or secrets. */
  data: Record<string, unknown>;
  createdAt: number;
}

/**
 * The event id of a fact: derived from what identifies the fact (a ledger entry, an invoice, a crossing), so the
 * same fact recorded twice (a retried transaction, two instances seeing one transition) is one event.
 */
export function eventIdOf(type: WebhookEventType, factKey: string): string {
  return `msg_${createHash('sha256').update(`${type}\n${factKey}`).digest('base64url').slice(0, 27)}`;
}

export function webhookEvent(type: WebhookEventType, factKey: string, accountId: string | null, data: Record<string, unknown>, createdAt: number): WebhookEventDraft {
  return { id: eventIdOf(type, factKey), accountId, type, data, createdAt };
}

/** The JSON body every attempt of the event sends (`type`, ISO `timestamp`, `data`), as Standard Webhooks suggests. */
export function eventBody(event: WebhookEventDraft): string {
  return JSON.stringify({ type: event.type, timestamp: new Date(event.createdAt).toISOString(), data: event.data });
}
