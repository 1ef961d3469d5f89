import type { ApiKey } from '../domain/records.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { WebhookRepository } from '../storage/repositories/webhook-repository.js';
import { webhookEvent } from '../domain/webhook-events.js';

/**
 * `key.disabled` when a change turned an enabled key off (by the account in the console, or by the operator). The
 * key's change is already stored: a failure to record the event is logged, never turned into a failed change.
 */
export async function recordKeyStatusChange(webhooks: WebhookRepository, logger: Logger, before: ApiKey, after: ApiKey, by: 'account' | 'operator'): Promise<void> {
  if (before.status === 'disabled' || after.status !== 'disabled') return;
  const event = webhookEvent('key.disabled', `${after.id}:${after.updatedAt}`, after.accountId, {
    key_id: after.id, key_name: after.name, key_hint: after.displayHint, disabled_by: by,
  }, after.updatedAt);
  try {
    await webhooks.recordEvent(event);
  } catch (error) {
    logger.warn('could not record the key.disabled webhook event', { key: after.id, ...describeError(error) });
  }
}
