/**
 * Channel health reaches the operator's endpoint over the wire: a channel whose host is unreachable is taken out by
 * its breaker (`channel.down`, once, however often it fails), and back in when the operator resets its health
 * (`channel.up`). Verified by the `standardwebhooks` package.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';
import { waitUntil } from '../cli/cli-process.js';
import { callChat, channelFor, startUpstream, type AnyUpstream } from '../resilience/resilience-support.js';

let gateway: TestGateway;
let account: SeededAccount;
let backup: AnyUpstream;
let receiver: WebhookReceiver;

beforeAll(async () => {
  backup = await startUpstream('openai');
  gateway = await startTestGateway({ env: { BREAKER_FAILURE_THRESHOLD: '2', BREAKER_COOLDOWN_MS: '60000', WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_CHECK_MS: '100' } });
  account = await seedAccount(gateway, { balanceUsd: 50 });
  receiver = new WebhookReceiver();
});

afterAll(async () => {
  await gateway?.close();
  await backup?.close();
  await receiver?.stop();
});

type Received = { type: string; data: Record<string, unknown> };

describe('channel events', () => {
  it('sends channel.down once when a channel is taken out, and channel.up when it is back', async () => {
    const url = await receiver.start();
    const endpoint = await gateway.admin<{ id: string; secret: string }>('POST', '/admin/webhooks', { url, event_types: ['channel.down', 'channel.up'] });
    expect(endpoint.status).toBe(201);
    receiver.secrets = [endpoint.body.secret];
    const dead = await startUpstream('openai');
    const deadUrl = dead.url;
    await dead.close();
    const { channelId } = await addRoutedModel(gateway, { model: 'hooked', channel: channelFor({ kind: 'openai', url: deadUrl }, 'hooked-dead', 'hooked', { priority: 10 }) });
    await gateway.admin('POST', '/admin/channels', channelFor(backup, 'hooked-backup', 'hooked'));
    for (let index = 0; index < 4; index += 1) expect((await callChat(gateway, account.key, 'openai', 'hooked', 'hello', false)).status).toBe(200);
    await waitUntil(() => receiver.processed.size >= 1, 10_000, 'channel.down');
    expect((await gateway.admin('POST', `/admin/channels/${channelId}/health/reset`)).status).toBe(200);
    await waitUntil(() => receiver.processed.size >= 2, 10_000, 'channel.up');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const events = [...receiver.processed.values()] as Received[];
    expect(events.map((event) => event.type)).toEqual(['channel.down', 'channel.up']);
    expect(events[0]?.data).toMatchObject({ channel_id: channelId, channel_name: 'hooked-dead', reason: 'failures' });
    expect(receiver.requests.every((request) => request.verifiedBy.length === 1 && request.status === 200)).toBe(true);
    expect(receiver.requests).toHaveLength(2);
  });
});
