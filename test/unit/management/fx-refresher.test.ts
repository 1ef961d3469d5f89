import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FxRefresher } from '../../../src/management/fx-refresher.js';
import { systemClock } from '../../../src/shared/clock.js';
import { silentLogger } from '../../../src/shared/logger.js';
import type { Storage } from '../../../src/storage/storage.js';

describe('FxRefresher', () => {
  let server: Server | null = null;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    server = null;
  });

  it('stopping cuts short a refresh whose source never answers, and keeps the last rates', async () => {
    const asked: IncomingMessage[] = [];
    server = createServer((request) => asked.push(request));
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const written: unknown[] = [];
    const storage = { fx: { set: async (rates: unknown) => { written.push(rates); } } } as unknown as Storage;
    const refresher = new FxRefresher(`http://127.0.0.1:${port}/latest`, 3_600_000, storage, systemClock, silentLogger);
    refresher.start();
    for (let waited = 0; asked.length === 0 && waited < 5000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(asked).toHaveLength(1);
    const startedAt = performance.now();
    await refresher.stop();
    // The source's own timeout is 10 s; stopping does not wait for it.
    expect(performance.now() - startedAt).toBeLessThan(5000);
    expect(written).toEqual([]);
  });
});
