import type { BreakerChange } from '../routing/channel-health.js';
import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { WebhookRepository } from '../storage/repositories/webhook-repository.js';
import { webhookEvent } from '../domain/webhook-events.js';

/** Transitions of one channel within this window, seen by several instances, are one event (its id names the window). */
const SAME_TRANSITION_WINDOW_MS = 60_000;

/**
 * `channel.down` and `channel.up` for the operator's endpoints, from the channel breakers' decisions (not a
 * channel-model's): down when the channel's breaker opens, up when it closes again. A breaker that re-opens after a
 * failed probe is still the same outage: only the first opening is told. With the health shared over Redis one
 * instance decides and the others adopt, so one event goes out.
 */
export class ChannelHealthEvents {
  /** The last state told per channel, so an outage is one `down` and one `up`. */
  readonly #told = new Map<string, 'down' | 'up'>();

  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly channelName: (channelId: string) => string | null,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  observe(change: BreakerChange): void {
    if (change.model !== null) return;
    const state = change.state === 'open' ? 'down' : 'up';
    const before = this.#told.get(change.channelId);
    if (before === state || (before === undefined && state === 'up')) return;
    this.#told.set(change.channelId, state);
    const now = this.clock.now();
    const event = webhookEvent(state === 'down' ? 'channel.down' : 'channel.up', `${change.channelId}:${Math.floor(now / SAME_TRANSITION_WINDOW_MS)}`, null, {
      channel_id: change.channelId,
      channel_name: this.channelName(change.channelId),
      ...(state === 'down' ? { reason: change.reason, retry_at: new Date(change.openUntil).toISOString() } : {}),
    }, now);
    this.webhooks.recordEvent(event).catch((error: unknown) => {
      this.logger.warn('could not record a channel health webhook event', { channel: change.channelId, ...describeError(error) });
    });
  }
}
