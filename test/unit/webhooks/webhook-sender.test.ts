/** The sender's rules over real sockets: addresses checked as they resolve, no redirects followed, bounded excerpts. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { WebhookSender } from '../../../src/webhooks/webhook-sender.js';
import { newWebhookSecret, webhookSignature } from '../../../src/webhooks/webhook-signature.js';
import { retryDelayMs, DEFAULT_RETRY_SECONDS } from '../../../src/webhooks/retry-schedule.js';

let server: Server;
let port: number;
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    hits.push(request.url ?? '');
    if (request.url === '/redirect') {
      response.writeHead(302, { location: `http://127.0.0.1:${port}/target` });
      response.end();
    } else if (request.url === '/long') {
      response.end('x'.repeat(100_000));
    } else if (request.url === '/slow') {
      setTimeout(() => response.end('late'), 3000);
    } else {
      response.end('ok');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const allowed = { timeoutMs: 1000, allowHttpLoopback: true, allowPrivateAddresses: false };
const webhook = (path: string, host = '127.0.0.1') => ({ url: `http://${host}:${port}${path}`, headers: { 'content-type': 'application/json' }, body: '{}' });

describe('WebhookSender', () => {
  it('refuses a host name that resolves to the loopback unless the operator allows it, before connecting', async () => {
    const sender = new WebhookSender({ ...allowed, allowHttpLoopback: false });
    const before = hits.length;
    const refusedName = await sender.send(webhook('/named', 'localhost'));
    const refusedLiteral = await sender.send(webhook('/literal'));
    expect(refusedName).toMatchObject({ statusCode: null, error: expect.stringContaining('not a public address') });
    expect(refusedLiteral).toMatchObject({ statusCode: null, error: expect.stringContaining('not a public address') });
    expect(hits.length).toBe(before);
    await sender.close();
  });

  it('never follows a redirect, and keeps only a bounded excerpt of the answer', async () => {
    const sender = new WebhookSender(allowed);
    const redirect = await sender.send(webhook('/redirect'));
    expect(redirect).toMatchObject({ statusCode: 302, error: 'answered 302; redirects are not followed' });
    expect(hits).not.toContain('/target');
    const long = await sender.send(webhook('/long'));
    expect(long.error).toBeNull();
    expect(long.responseExcerpt).toHaveLength(500);
    const slow = await sender.send(webhook('/slow'));
    expect(slow).toMatchObject({ statusCode: null, error: 'no answer within 1 s' });
    await sender.close();
  });
});

describe('Standard Webhooks signature', () => {
  it('is what the reference package signs and verifies, one signature per secret', () => {
    const secret = newWebhookSecret();
    const other = newWebhookSecret();
    const at = new Date();
    const seconds = Math.floor(at.getTime() / 1000);
    const body = '{"type":"webhook.test","data":{"n":"1"}}';
    expect(webhookSignature([secret], 'msg_1', seconds, body)).toBe(new Webhook(secret).sign('msg_1', at, body));
    const both = webhookSignature([secret, other], 'msg_1', seconds, body);
    const headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': String(seconds), 'webhook-signature': both };
    expect(new Webhook(other).verify(body, headers)).toEqual({ type: 'webhook.test', data: { n: '1' } });
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow();
  });
});

describe('retry schedule', () => {
  it('is bounded, grows, and adds at most a fifth as jitter', () => {
    expect(DEFAULT_RETRY_SECONDS).toEqual([5, 300, 1800, 7200, 18_000, 36_000, 36_000]);
    expect(retryDelayMs(1, DEFAULT_RETRY_SECONDS, () => 0)).toBe(5000);
    expect(retryDelayMs(1, DEFAULT_RETRY_SECONDS, () => 0.999)).toBe(5999);
    expect(retryDelayMs(7, DEFAULT_RETRY_SECONDS, () => 0)).toBe(36_000_000);
    expect(retryDelayMs(8, DEFAULT_RETRY_SECONDS)).toBeNull();
  });
});
