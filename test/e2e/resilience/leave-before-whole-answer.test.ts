/**
 * A caller of a non-streamed chat who leaves after the upstream's head arrived but before its whole answer did: the
 * gateway closes the upstream connection at once (not when the answer would have ended), tries no other channel, and
 * records the request as the caller's leaving (499), with no verdict against the channel.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { channelFor, startUpstream, usageRows, type AnyUpstream } from './resilience-support.js';

/** How soon after the caller left the upstream connection must be closed. */
const CLOSE_WITHIN_MS = 1000;
const MODEL = 'leave-before-whole';

/** An OpenAI-shaped upstream that sends its head and the start of its body, then holds the rest. */
interface HeldUpstream {
  url: string;
  requests: number;
  /** When the head of the latest answer was written; null before any. */
  headSentAt: number | null;
  /** When the latest request's connection closed; null while open. */
  closedAt: number | null;
  close(): Promise<void>;
}

async function startHeldUpstream(): Promise<HeldUpstream> {
  const sockets = new Set<Socket>();
  const held: HeldUpstream = { url: '', requests: 0, headSentAt: null, closedAt: null, close: async () => undefined };
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    held.requests += 1;
    held.closedAt = null;
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '4096' });
      response.write('{"id":"chatcmpl-held","object":"chat.completion",');
      held.headSentAt = Date.now();
    });
    response.socket?.on('close', () => {
      held.closedAt ??= Date.now();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  held.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  held.close = async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return held;
}

let gateway: TestGateway;
let account: SeededAccount;
let upstream: HeldUpstream;
let backup: AnyUpstream;
let primaryId: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  upstream = await startHeldUpstream();
  backup = await startUpstream('openai');
  // Generous timeouts: only the caller's leaving may end the held answer.
  ({ channelId: primaryId } = await addRoutedModel(gateway, { model: MODEL, channel: channelFor({ kind: 'openai', url: upstream.url }, 'held-primary', MODEL, { priority: 10, settings: { first_byte_timeout_ms: 60_000, idle_timeout_ms: 60_000 } }) }));
  const second = await gateway.admin('POST', '/admin/channels', channelFor(backup, 'held-backup', MODEL, { priority: 1 }));
  expect(second.status).toBe(201);
  account = await seedAccount(gateway, { balanceUsd: 5 });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await backup?.close();
});

it('leaving between the upstream head and the whole answer closes the upstream connection and tries no other channel', async () => {
  const controller = new AbortController();
  const answer = fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    signal: controller.signal,
    headers: { authorization: `Bearer ${account.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'Hello' }] }),
  });
  answer.catch(() => undefined);
  await expect.poll(() => upstream.headSentAt, { timeout: 5000, interval: 5 }).not.toBeNull();
  // The head has reached the gateway (it sent the first bytes of the body after it) and the rest is held.
  await new Promise((resolve) => setTimeout(resolve, 100));
  expect(upstream.closedAt).toBeNull();
  const backupRequests = backup.requests.length;
  const leftAt = Date.now();
  controller.abort();
  await expect(answer).rejects.toThrow();

  await expect.poll(() => upstream.closedAt, { timeout: CLOSE_WITHIN_MS * 2, interval: 5 }).not.toBeNull();
  expect(upstream.closedAt! - leftAt).toBeLessThan(CLOSE_WITHIN_MS);
  expect(upstream.requests).toBe(1);
  expect(backup.requests.length).toBe(backupRequests);

  // The key is this test's own: its one usage row is this request's.
  const status = async (): Promise<number | undefined> => (await usageRows(gateway, account.keyId))[0]?.status;
  await expect.poll(status, { timeout: 10_000 }).toBe(499);
  const rows = await usageRows(gateway, account.keyId);
  expect(rows).toHaveLength(1);
  expect(rows[0]!.error_code).toBe('client_closed_request');

  // No verdict against the channel: the caller's leaving is not the upstream's failure.
  const health = await gateway.admin<{ breaker: { state: string; consecutive_failures: number; recent: { failures: number } } }>('GET', `/admin/channels/${primaryId}/health`);
  expect(health.body.breaker.state).toBe('closed');
  expect(health.body.breaker.recent.failures).toBe(0);
});
