import type { ApiKey } from '../domain/records.js';
import { webhookEvent, type WebhookEventDraft } from '../domain/webhook-events.js';

/**
 * The event a key's change calls for: `key.disabled` when it turned an enabled key off (by the account in the
 * console, or by the operator); else none. Stored with the change (see ApiKeyRepository.update).
 */
export function keyStatusEvent(by: 'account' | 'operator'): (before: ApiKey, after: ApiKey) => WebhookEventDraft | null {
  return (before, after) => {
    if (before.status === 'disabled' || after.status !== 'disabled') return null;
    return webhookEvent('key.disabled', `${after.id}:${after.updatedAt}`, after.accountId, {
      key_id: after.id, key_name: after.name, key_hint: after.displayHint, disabled_by: by,
    }, after.updatedAt);
  };
}
