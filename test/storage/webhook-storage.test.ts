/**
 * The webhook outbox in storage, on SQLite and (with TEST_DATABASE_URL) PostgreSQL, through two storage handles on
 * one database (two instances): an event nobody subscribes to leaves nothing; one recorded again is one event with
 * one delivery per subscribed endpoint; each attempt is leased by exactly one of many racing handles; an owner never
 * reaches another owner's endpoints or deliveries (the operator's are nobody's account's); ended deliveries are
 * pruned with their log and events, pending ones are kept.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/shared/ids.js';
import { SecretBox } from '../../src/shared/secret-box.js';
import { openStorage } from '../../src/storage/open-storage.js';
import type { Storage } from '../../src/storage/storage.js';
import { webhookEvent } from '../../src/domain/webhook-events.js';
import { newWebhookSecret } from '../../src/webhooks/webhook-signature.js';
import { createThrowawayPostgresDatabase, isPostgresUrl } from '../support/postgres-test-database.js';

const NOW = 1_800_000_000_000;
const directories: string[] = [];

function describeWebhookStorage(name: string, openUrl: () => Promise<{ url: string; cleanup: () => Promise<void> }>): void {
  describe(name, () => {
    let a: Storage;
    let b: Storage;
    let cleanup: () => Promise<void> = async () => {};

    beforeAll(async () => {
      const opened = await openUrl();
      cleanup = opened.cleanup;
      const secretBox = new SecretBox(randomBytes(32));
      a = await openStorage({ url: opened.url, secretBox });
      b = await openStorage({ url: opened.url, secretBox });
    });

    afterAll(async () => {
      await a?.close();
      await b?.close();
      await cleanup();
    });

    async function endpoint(owner: string | null, eventTypes: string[] = []): Promise<{ id: string; secret: string }> {
      const id = newId('whe', NOW);
      const secret = newWebhookSecret();
      await a.webhooks.createEndpoint({ id, accountId: owner, url: 'https://hooks.example.com/x', description: '', format: 'standard', eventTypes, enabled: true, createdAt: NOW, updatedAt: NOW, secret });
      return { id, secret };
    }

    it('keeps nothing for an event nobody subscribes to, and one event per fact however often it is recorded', async () => {
      const owner = newId('acct');
      const silent = webhookEvent('topup.succeeded', newId('fact'), owner, { amount_usd: '1' }, NOW);
      expect(await a.webhooks.recordEvent(silent)).toBe(false);
      const subscribed = await endpoint(owner, ['topup.succeeded']);
      const other = await endpoint(owner, ['invoice.issued']);
      const all = await endpoint(owner);
      const event = webhookEvent('topup.succeeded', newId('fact'), owner, { amount_usd: '1' }, NOW);
      // One after the other: two SQLite handles in one process would wait on each other's write lock synchronously.
      const results = [await a.webhooks.recordEvent(event), await b.webhooks.recordEvent(event), await a.webhooks.recordEvent(event)];
      expect(results.filter(Boolean)).toHaveLength(1);
      expect(await a.webhooks.listDeliveries(owner, subscribed.id, 10)).toHaveLength(1);
      expect(await a.webhooks.listDeliveries(owner, all.id, 10)).toHaveLength(1);
      expect(await a.webhooks.listDeliveries(owner, other.id, 10)).toHaveLength(0);
      const due = (await a.webhooks.listDue(NOW, 1000)).filter((delivery) => delivery.eventId === event.id);
      expect(due).toHaveLength(2);
      expect(due[0]?.secrets).toHaveLength(1);
      expect(JSON.parse(due[0]?.body ?? '{}')).toEqual({ type: 'topup.succeeded', timestamp: new Date(NOW).toISOString(), data: { amount_usd: '1' } });
    });

    it('leases each attempt to exactly one of many racing handles', async () => {
      const owner = newId('acct');
      const target = await endpoint(owner);
      const event = webhookEvent('webhook.test', newId('fact'), owner, {}, NOW);
      await a.webhooks.recordEvent(event, target.id);
      const [delivery] = (await a.webhooks.listDue(NOW, 1000)).filter((entry) => entry.endpointId === target.id);
      expect(delivery).toBeDefined();
      const won = await Promise.all(Array.from({ length: 8 }, (_, index) => (index % 2 === 0 ? a : b).webhooks.lease(delivery!, NOW + 60_000, NOW)));
      expect(won.filter(Boolean)).toHaveLength(1);
      // The leased attempt is not due again until its lease ends.
      expect((await a.webhooks.listDue(NOW + 1000, 1000)).some((entry) => entry.id === delivery!.id)).toBe(false);
      await a.webhooks.finishAttempt(delivery!.id, { attempt: { attempt: 1, startedAt: NOW, statusCode: 200, latencyMs: 12, error: null, responseExcerpt: 'ok' }, state: 'succeeded', nextAttemptAt: NOW }, NOW);
      // A late finish of a lost lease changes nothing.
      await b.webhooks.finishAttempt(delivery!.id, { attempt: { attempt: 1, startedAt: NOW, statusCode: 500, latencyMs: 9, error: 'answered 500', responseExcerpt: null }, state: 'pending', nextAttemptAt: NOW }, NOW);
      const [logged] = await a.webhooks.listDeliveries(owner, target.id, 10);
      expect(logged).toMatchObject({ state: 'succeeded', attempts: 1, lastStatus: 200 });
      expect(logged?.log).toHaveLength(1);
    });

    it('binds every query to its owner: accounts and the operator never reach each other\'s endpoints', async () => {
      const owner = newId('acct');
      const stranger = newId('acct');
      const mine = await endpoint(owner);
      const operators = await endpoint(null, ['channel.down']);
      expect(await a.webhooks.getEndpoint(stranger, mine.id)).toBeNull();
      expect(await a.webhooks.getEndpoint(null, mine.id)).toBeNull();
      expect(await a.webhooks.getEndpoint(owner, operators.id)).toBeNull();
      expect(await a.webhooks.updateEndpoint(stranger, mine.id, { enabled: false }, NOW)).toBeNull();
      expect(await a.webhooks.rotateSecret(stranger, mine.id, newWebhookSecret(), NOW + 1, NOW)).toBeNull();
      expect(await a.webhooks.deleteEndpoint(stranger, mine.id)).toBe(false);
      await a.webhooks.recordEvent(webhookEvent('webhook.test', newId('fact'), owner, {}, NOW), mine.id);
      const [delivery] = await a.webhooks.listDeliveries(owner, mine.id, 10);
      expect(await a.webhooks.listDeliveries(stranger, mine.id, 10)).toEqual([]);
      expect(await a.webhooks.resend(stranger, mine.id, delivery!.id, NOW)).toBe(false);
      // An account's event never reaches the operator's endpoint, nor the reverse.
      await a.webhooks.recordEvent(webhookEvent('channel.down', newId('fact'), owner, {}, NOW));
      expect(await a.webhooks.listDeliveries(null, operators.id, 10)).toEqual([]);
      await a.webhooks.recordEvent(webhookEvent('channel.down', newId('fact'), null, {}, NOW));
      expect(await a.webhooks.listDeliveries(null, operators.id, 10)).toHaveLength(1);
      expect((await a.webhooks.listDeliveries(owner, mine.id, 10)).map((entry) => entry.eventType).sort()).toEqual(['channel.down', 'webhook.test']);
    });

    it('prunes ended deliveries with their log and events, and keeps pending ones', async () => {
      const owner = newId('acct');
      const target = await endpoint(owner);
      const ended = webhookEvent('webhook.test', newId('fact'), owner, {}, NOW);
      const waiting = webhookEvent('webhook.test', newId('fact'), owner, {}, NOW);
      await a.webhooks.recordEvent(ended, target.id);
      await a.webhooks.recordEvent(waiting, target.id);
      const endedDelivery = (await a.webhooks.listDeliveries(owner, target.id, 10)).find((entry) => entry.eventId === ended.id);
      expect(await a.webhooks.lease(endedDelivery!, NOW + 60_000, NOW)).toBe(true);
      await a.webhooks.finishAttempt(endedDelivery!.id, { attempt: { attempt: 1, startedAt: NOW, statusCode: 410, latencyMs: 5, error: 'answered 410', responseExcerpt: null }, state: 'failed', nextAttemptAt: NOW }, NOW);
      let pruned = 0;
      for (let round = 0; round < 50; round += 1) {
        const removed = await a.webhooks.prune(NOW + 1, 1000);
        pruned += removed;
        if (removed === 0) break;
      }
      expect(pruned).toBeGreaterThanOrEqual(1);
      const left = await a.webhooks.listDeliveries(owner, target.id, 10);
      expect(left.map((entry) => entry.eventId)).toEqual([waiting.id]);
      // The pruned event can be recorded again as a new one (its id is free), the pending one cannot.
      expect(await a.webhooks.recordEvent(waiting, target.id)).toBe(false);
    });
  });
}

afterAll(async () => {
  for (const directory of directories) await rm(directory, { recursive: true, force: true });
});

describeWebhookStorage('SQLite: webhook outbox', async () => {
  const directory = await mkdtemp(join(tmpdir(), 'gateway-webhooks-'));
  directories.push(directory);
  return { url: `sqlite:${join(directory, 'gateway.db')}`, cleanup: async () => {} };
});

const adminUrl = process.env.TEST_DATABASE_URL;
if (isPostgresUrl(adminUrl)) {
  describeWebhookStorage('PostgreSQL: webhook outbox', async () => {
    const database = await createThrowawayPostgresDatabase(adminUrl);
    return { url: database.url, cleanup: () => database.drop() };
  });
}
