import { booleanSetting, integerSetting, SettingError } from './settings.js';
import { DEFAULT_RETRY_SECONDS } from '../webhooks/retry-schedule.js';

/** Outgoing webhooks (docs/operators.md, "Webhooks"). */
export interface WebhookConfig {
  /** How often each instance looks for due deliveries (WEBHOOK_CHECK_MS). */
  checkMs: number;
  /** One attempt's deadline, connection to last byte (WEBHOOK_TIMEOUT_SECONDS). */
  timeoutMs: number;
  /** Endpoint URLs may be `http://` when their host is the loopback (WEBHOOK_ALLOW_HTTP_LOOPBACK; tests, local receivers). */
  allowHttpLoopback: boolean;
  /** Deliveries may reach private, loopback and link-local addresses (WEBHOOK_ALLOW_PRIVATE_ADDRESSES). */
  allowPrivateAddresses: boolean;
  /** Seconds to wait before each retry of a failed delivery (WEBHOOK_RETRY_SECONDS, comma-separated); attempts = retries + 1. */
  retrySeconds: number[];
  /**
   * Test events one endpoint may be sent a minute (WEBHOOK_TEST_EVENTS_PER_MINUTE); its owner (an account, or the
   * operator) may send four times as many a minute and forty times as many an hour over all its endpoints.
   */
  testEventsPerMinute: number;
  /** How long a rotated-out secret still signs deliveries (WEBHOOK_SECRET_OVERLAP_HOURS). */
  secretOverlapMs: number;
}

export class WebhookConfigError extends SettingError {
  override name = 'WebhookConfigError';
}

function readSchedule(read: (name: string) => string | undefined): number[] {
  const raw = read('WEBHOOK_RETRY_SECONDS');
  if (raw === undefined) return [...DEFAULT_RETRY_SECONDS];
  const values = raw.split(',').map((part) => Number(part.trim()));
  if (values.length > 20 || values.some((value) => !Number.isInteger(value) || value < 1 || value > 86_400)) {
    throw new WebhookConfigError(`WEBHOOK_RETRY_SECONDS must list at most 20 whole numbers of seconds from 1 to 86400, separated by commas, got "${raw}"`);
  }
  return values;
}

export function readWebhookConfig(read: (name: string) => string | undefined): WebhookConfig {
  return {
    checkMs: integerSetting(read, 'WEBHOOK_CHECK_MS', 1000, 50, 600_000),
    timeoutMs: integerSetting(read, 'WEBHOOK_TIMEOUT_SECONDS', 15, 1, 120) * 1000,
    allowHttpLoopback: booleanSetting(read, 'WEBHOOK_ALLOW_HTTP_LOOPBACK'),
    allowPrivateAddresses: booleanSetting(read, 'WEBHOOK_ALLOW_PRIVATE_ADDRESSES'),
    retrySeconds: readSchedule(read),
    secretOverlapMs: integerSetting(read, 'WEBHOOK_SECRET_OVERLAP_HOURS', 24, 1, 720) * 3_600_000,
    testEventsPerMinute: integerSetting(read, 'WEBHOOK_TEST_EVENTS_PER_MINUTE', 5, 1, 1000),
  };
}
