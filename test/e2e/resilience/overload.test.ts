/**
 * Overload: with a bound of requests in flight (ADMISSION_MAX_IN_FLIGHT) and a slow upstream, a burst larger
 * than the bound has the excess answered 503 `overloaded` with Retry-After at once, in the caller's family, while
 * the admitted requests complete; probes and the admin API are never shed; /readyz turns unready while requests
 * are refused and ready again afterwards; the refusals are counted in the metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { familyErrorProblem } from '../../support/family-error.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';

const BOUND = 8;
const BURST = 40;
const UPSTREAM_DELAY_MS = 2500;

interface Answer {
  status: number;
  retryAfter: string | null;
  text: string;
  /** From sending the request to its response headers. */
  ms: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('admission control under overload', () => {
  let gateway: TestGateway;
  let upstream: MockOpenAIUpstream;
  let account: SeededAccount;

  beforeAll(async () => {
    upstream = await startMockOpenAIUpstream({ responseDelayMs: UPSTREAM_DELAY_MS, recordRequests: false });
    // A fixed bound (no queue target), so the test does not depend on this machine's event-loop delay.
    gateway = await startTestGateway({ env: { ADMISSION_MAX_IN_FLIGHT: String(BOUND), ADMISSION_QUEUE_TARGET_MS: '0' } });
    await addRoutedModel(gateway, {
      model: 'slow-model',
      channel: { name: 'slow-openai', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { 'slow-model': 'gpt-4o-mini' } },
    });
    account = await seedAccount(gateway, { balanceUsd: 50 });
  });

  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });

  async function send(path: string, body: unknown, headers: Record<string, string>): Promise<Answer> {
    const startedAt = performance.now();
    const response = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
    const ms = performance.now() - startedAt;
    return { status: response.status, retryAfter: response.headers.get('retry-after'), text: await response.text(), ms };
  }

  const chat = (): Promise<Answer> =>
    send('/v1/chat/completions', { model: 'slow-model', messages: [{ role: 'user', content: 'hello' }] }, { authorization: `Bearer ${account.key}` });

  it('refuses the excess at once with 503 overloaded and Retry-After, serves the admitted, and recovers', async () => {
    // One call first: the key and the routing snapshot are warm; then as many connections as the burst needs are
    // opened (and kept alive), so the burst measures the gateway rather than TCP handshakes on a busy machine.
    expect((await chat()).status).toBe(200);
    await Promise.all(Array.from({ length: BURST + 2 }, async () => (await fetch(`${gateway.url}/healthz`)).text()));
    const burst = Array.from({ length: BURST }, () => chat());
    // Wait until the burst has reached the gateway: some requests admitted, the rest already refused.
    let shedSeen = false;
    for (let attempt = 0; attempt < 100 && !shedSeen; attempt++) {
      await sleep(20);
      shedSeen = (await fetch(`${gateway.url}/readyz`)).status === 503;
    }
    expect(shedSeen, '/readyz turned unready while shedding').toBe(true);

    // While the bound is full: probes and the admin API still answer; a call in another family is refused in its shape.
    const ready = await fetch(`${gateway.url}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ status: 'unready', checks: { overloaded: true }, error: { code: 'not_ready', message: 'Not ready: shedding load.' } });
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
    expect((await gateway.admin('GET', '/admin/channels')).status).toBe(200);
    const anthropic = await send('/v1/messages', { model: 'slow-model', max_tokens: 16, messages: [{ role: 'user', content: 'hello' }] }, { 'x-api-key': account.key, 'anthropic-version': '2023-06-01' });
    expect(anthropic.status).toBe(503);
    expect(familyErrorProblem('anthropic', anthropic.text)).toBeNull();
    expect(JSON.parse(anthropic.text)).toMatchObject({ type: 'error', error: { code: 'overloaded' } });

    const answers = await Promise.all(burst);
    const admitted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(admitted).toHaveLength(BOUND);
    expect(refused).toHaveLength(BURST - BOUND);
    for (const answer of refused) {
      expect(answer.status).toBe(503);
      expect(answer.retryAfter).toBe('1');
      expect(familyErrorProblem('openai', answer.text)).toBeNull();
      expect(JSON.parse(answer.text)).toMatchObject({ error: { code: 'overloaded', type: 'upstream_error' } });
    }
    // A refusal waits for nothing; an admitted request waits for the slow upstream. The bound is generous for a
    // loaded test machine (a few ms on a quiet one), and far under the upstream's delay.
    const slowestRefusal = Math.max(...refused.map((answer) => answer.ms));
    expect(slowestRefusal).toBeLessThan(1000);
    for (const answer of admitted) expect(answer.ms).toBeGreaterThanOrEqual(UPSTREAM_DELAY_MS - 50);

    const metrics = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${gateway.adminToken}` } });
    const text = await metrics.text();
    expect(text).toContain(`unigate_shed_requests_total ${BURST - BOUND + 1}`);
    expect(text).toContain(`unigate_admission_limit ${BOUND}`);
    // Without a queue target the share never moves: the bound alone refused the burst's excess.
    expect(text).toContain('unigate_admission_share 1');

    // Once nothing is refused for a second, the instance is ready again and serves new requests.
    let readyAgain = false;
    for (let attempt = 0; attempt < 50 && !readyAgain; attempt++) {
      await sleep(100);
      readyAgain = (await fetch(`${gateway.url}/readyz`)).status === 200;
    }
    expect(readyAgain, '/readyz ready again after the burst').toBe(true);
    expect((await chat()).status).toBe(200);
  }, 30_000);
});
