/** Channel breaker decisions become one `channel.down` per outage and one `channel.up` when it ends. */
import { describe, expect, it } from 'vitest';
import type { BreakerChange } from '../../../src/routing/channel-health.js';
import { ManualClock } from '../../../src/shared/clock.js';
import { createLogger } from '../../../src/shared/logger.js';
import type { WebhookRepository } from '../../../src/storage/repositories/webhook-repository.js';
import { ChannelHealthEvents } from '../../../src/webhooks/channel-events.js';
import type { WebhookEventDraft } from '../../../src/domain/webhook-events.js';

function recorder(): { events: WebhookEventDraft[]; webhooks: WebhookRepository } {
  const events: WebhookEventDraft[] = [];
  const webhooks = { recordEvent: (event: WebhookEventDraft) => { events.push(event); return Promise.resolve(true); } } as unknown as WebhookRepository;
  return { events, webhooks };
}

const open = (channelId: string, model: string | null = null): BreakerChange => ({ channelId, model, state: 'open', openUntil: 1_000_000, level: 1, reason: 'failures' });
const closed = (channelId: string): BreakerChange => ({ channelId, model: null, state: 'closed', openUntil: 0, level: 0, reason: null });

describe('ChannelHealthEvents', () => {
  it('tells an outage once, its end once, and ignores channel-model breakers', () => {
    const { events, webhooks } = recorder();
    const clock = new ManualClock(1_796_540_400_000);
    const channelEvents = new ChannelHealthEvents(webhooks, (id) => (id === 'ch_1' ? 'primary' : null), clock, createLogger('error'));
    channelEvents.observe(closed('ch_1'));
    channelEvents.observe(open('ch_1', 'gpt-4o'));
    channelEvents.observe(open('ch_1'));
    clock.advance(30_000);
    channelEvents.observe(open('ch_1'));
    clock.advance(30_000);
    channelEvents.observe(closed('ch_1'));
    channelEvents.observe(closed('ch_1'));
    expect(events.map((event) => [event.type, event.accountId, event.data.channel_name])).toEqual([['channel.down', null, 'primary'], ['channel.up', null, 'primary']]);
    expect(events[0]?.data).toMatchObject({ channel_id: 'ch_1', reason: 'failures' });
    expect(events[0]?.id).not.toBe(events[1]?.id);
  });

  it('gives two instances seeing one transition in the same minute the same event id', () => {
    const first = recorder();
    const second = recorder();
    const clock = new ManualClock(1_796_540_400_000);
    new ChannelHealthEvents(first.webhooks, () => 'primary', clock, createLogger('error')).observe(open('ch_1'));
    clock.advance(5_000);
    new ChannelHealthEvents(second.webhooks, () => 'primary', clock, createLogger('error')).observe(open('ch_1'));
    expect(first.events[0]?.id).toBe(second.events[0]?.id);
  });
});
