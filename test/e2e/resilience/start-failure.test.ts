/**
 * A start that fails half-way (here: the console's port is taken, after the database, Redis, timers and the API
 * listener were opened) closes what it opened: the API port is free again and nothing is left that would keep the
 * process alive.
 */
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { startTestGateway } from '../../support/gateway-harness.js';

const redisUrl = process.env.TEST_REDIS_URL;

/** Resources keeping this process alive, by type (timers that are unref'd do not count). */
function aliveResources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const type of process.getActiveResourcesInfo()) counts[type] = (counts[type] ?? 0) + 1;
  return counts;
}

/** The resource types of which more are alive now than in `before`, as "type: before → now". */
function resourcesGrownSince(before: Record<string, number>): string[] {
  return Object.entries(aliveResources()).filter(([type, count]) => count > (before[type] ?? 0)).map(([type, count]) => `${type}: ${before[type] ?? 0} → ${count}`);
}

async function occupiedPort(): Promise<{ port: number; release: () => Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, release: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('a start that fails', () => {
  it('closes the database, Redis, timers and the listener it had already opened, and passes the error on', async () => {
    const taken = await occupiedPort();
    const apiPort = await occupiedPort();
    // The API listener gets a port that is free and known, so the test can check it is given back.
    await apiPort.release();
    // stdout and stderr are opened on first use (by whoever writes first): open them before counting.
    void process.stdout.writable;
    void process.stderr.writable;
    const before = aliveResources();
    try {
      await expect(startTestGateway({
        env: {
          PORT: String(apiPort.port),
          CONSOLE_PORT: String(taken.port),
          ...(redisUrl === undefined ? {} : { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `start-failure-${Date.now()}:` }),
        },
      })).rejects.toMatchObject({ code: 'EADDRINUSE' });
      // Closed sockets leave the list once their close callbacks ran. (No expect.poll: its own timer would count.)
      let grown = resourcesGrownSince(before);
      for (const deadline = Date.now() + 5000; grown.length > 0 && Date.now() < deadline;) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        grown = resourcesGrownSince(before);
      }
      expect(grown).toEqual([]);
      const again = net.createServer();
      await new Promise<void>((resolve, reject) => {
        again.once('error', reject);
        again.listen(apiPort.port, '127.0.0.1', resolve);
      });
      await new Promise((resolve) => again.close(resolve));
    } finally {
      await taken.release();
    }
  });
});
