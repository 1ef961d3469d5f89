/**
 * Two gateway instances on one database (PostgreSQL with TEST_DATABASE_URL, else one SQLite file) both run the
 * webhook deliverer every 20 ms: each attempt is leased by one of them, so a receiver that always answers 200 gets
 * every event exactly once, however the two race.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../cli/cli-process.js';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { WebhookReceiver } from '../../support/webhook-receiver.js';

const EVENTS = 60;
let first: TestGateway;
let second: TestGateway;
let receiver: WebhookReceiver;

beforeAll(async () => {
  // The events are test events: their limit (5 a minute per endpoint by default) is raised to let 60 through.
  const env = { WEBHOOK_ALLOW_HTTP_LOOPBACK: 'true', WEBHOOK_CHECK_MS: '50', WEBHOOK_TEST_EVENTS_PER_MINUTE: '100', SECRET_KEY: randomBytes(32).toString('hex') };
  first = await startTestGateway({ env });
  second = await startTestGateway({ env: { ...env, DATABASE_URL: first.databaseUrl } });
  receiver = new WebhookReceiver();
});

afterAll(async () => {
  await second?.close();
  await first?.close();
  await receiver?.stop();
});

describe('two instances deliver one outbox', () => {
  it('sends every event once', async () => {
    const url = await receiver.start();
    const endpoint = await first.admin<{ id: string; secret: string }>('POST', '/admin/webhooks', { url, event_types: ['webhook.test'] });
    expect(endpoint.status).toBe(201);
    receiver.secrets = [endpoint.body.secret];
    const ids: string[] = [];
    for (let index = 0; index < EVENTS; index += 1) {
      const test = await first.admin<{ id: string }>('POST', `/admin/webhooks/${endpoint.body.id}/test`);
      expect(test.status).toBe(202);
      ids.push(test.body.id);
    }
    await waitUntil(() => ids.every((id) => receiver.processed.has(id)), 20_000, 'every event delivered');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(receiver.requests).toHaveLength(EVENTS);
    expect(new Set(receiver.requests.map((request) => request.id)).size).toBe(EVENTS);
    const delivered = (instance: TestGateway) => instance.logs.filter((line) => line.includes('webhook delivered')).length;
    expect(delivered(first) + delivered(second)).toBe(EVENTS);
  });
});
