import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';

describe('GET /api/fx/latest refreshed from FX_SOURCE_URL', () => {
  let source: Server;
  let sourceUrl: string;
  let served: unknown = { result: 'success', base_code: 'USD', time_last_update_unix: 1_790_000_000, rates: { USD: 1, JPY: 151.23, CNY: 7.1, EUR: 0.92 } };
  let gateway: TestGateway;

  beforeAll(async () => {
    source = createServer((_request, response) => {
      response.setHeader('content-type', 'application/json');
      response.end(JSON.stringify(served));
    });
    await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
    sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}/latest/USD`;
    gateway = await startTestGateway({ env: { FX_SOURCE_URL: sourceUrl, FX_REFRESH_SECONDS: '10' } });
  });

  afterAll(async () => {
    await gateway?.close();
    await new Promise<void>((resolve) => source.close(() => resolve()));
  });

  it('publishes the source rates with their as-of time, without a key', async () => {
    await expect.poll(async () => (await fetch(`${gateway.url}/api/fx/latest`)).status, { timeout: 5000 }).toBe(200);
    const body = await (await fetch(`${gateway.url}/api/fx/latest`)).json();
    expect(body).toEqual({ base: 'USD', rates: { JPY: 151.23, CNY: 7.1, EUR: 0.92 }, as_of: new Date(1_790_000_000_000).toISOString(), source: expect.stringMatching(/^127\.0\.0\.1:\d+$/) });
  });

  it('keeps the last good rates when the source answers something unusable', async () => {
    served = { base: 'USD', date: '2026-11-20', rates: { JPY: 150 } };
    const refresher = await import('../../../src/management/fx-refresher.js');
    const refreshed = await new refresher.FxRefresher(sourceUrl, 60_000, gateway.gateway.services.storage, gateway.gateway.services.clock, gateway.gateway.services.logger).refresh();
    expect(refreshed).toBe(false);
    const body = (await (await fetch(`${gateway.url}/api/fx/latest`)).json()) as { rates: Record<string, number> };
    expect(body.rates.JPY).toBe(151.23);

    served = { base: 'USD', date: '2026-11-20', rates: { JPY: 150.5, CNY: 7.2, EUR: 0.9 } };
    expect(await new refresher.FxRefresher(sourceUrl, 60_000, gateway.gateway.services.storage, gateway.gateway.services.clock, gateway.gateway.services.logger).refresh()).toBe(true);
    const updated = await (await fetch(`${gateway.url}/api/fx/latest`)).json();
    expect(updated).toMatchObject({ rates: { JPY: 150.5, CNY: 7.2, EUR: 0.9 }, as_of: '2026-11-20T00:00:00.000Z' });
  });
});
