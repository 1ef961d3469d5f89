/**
 * /healthz and /readyz on the API listener: live always; ready with database, Redis (when configured) and
 * migrations current; unready as soon as shutdown starts (DRAIN_SECONDS), while requests are still served.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { familyErrorProblem } from '../../support/family-error.js';

const redisUrl = process.env.TEST_REDIS_URL;

describe('/healthz and /readyz', () => {
  const started: TestGateway[] = [];
  afterAll(async () => {
    await Promise.all(started.map((gateway) => gateway.close()));
  });

  it('are live and ready on a healthy gateway, without a key, and are not cached', async () => {
    const gateway = await startTestGateway({ env: redisUrl === undefined ? {} : { REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `readyz-${Date.now()}:` } });
    started.push(gateway);
    const live = await fetch(`${gateway.url}/healthz`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${gateway.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.headers.get('cache-control')).toBe('no-store');
    expect(await ready.json()).toEqual({
      status: 'ready',
      checks: { database: 'ok', redis: redisUrl === undefined ? null : 'ok', migrations: 'current', draining: false, overloaded: false },
    });
  });

  it('says unready with the error object from the moment shutdown starts, while still serving for DRAIN_SECONDS', async () => {
    // Three seconds of drain: the three requests below must all land inside it, also on a busy test machine.
    const gateway = await startTestGateway({ env: { DRAIN_SECONDS: '3' } });
    started.push(gateway);
    const closing = gateway.gateway.close();
    const unready = await fetch(`${gateway.url}/readyz`);
    const text = await unready.text();
    expect(unready.status).toBe(503);
    expect(unready.headers.get('retry-after')).toBe('1');
    expect(familyErrorProblem('openai', text)).toBeNull();
    expect(JSON.parse(text)).toMatchObject({ status: 'unready', checks: { database: 'ok', draining: true }, error: { code: 'not_ready' } });
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${gateway.url}/v1/models`)).status).toBe(200);
    await closing;
    await expect(fetch(`${gateway.url}/healthz`)).rejects.toThrow();
  });
});
