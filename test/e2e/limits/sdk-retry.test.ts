/**
 * The openai SDK's own retry (maxRetries ≥ 1) honours the gateway's Retry-After and ends in success: the clock is
 * shifted so the key's RPM window ends a moment after the limit is reached, the SDK waits what Retry-After says,
 * and its retry lands in the fresh window.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Clock } from '../../../src/shared/clock.js';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';
import { addSimulatorModel } from '../admin/helpers.js';
import { chatWith, expectOk, MINUTE } from './limits-support.js';

const MODEL = 'retry-sim';
/** Real time shifted by `offset`: the test moves the window edge close without waiting for it. */
const shifted = { offset: 0 };
const clock: Clock = { now: () => Date.now() + shifted.offset };
let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway({ clock });
  await addSimulatorModel(gateway, MODEL, undefined, { settings: { output_tokens: 4 } });
});

afterAll(async () => {
  await gateway?.close();
});

it('waits Retry-After and succeeds in the next window', async () => {
  const { key } = await seedAccount(gateway, { key: { rpm: 1 } });
  // The limit is reached in one window; the SDK then asks 700 ms before that window ends, so Retry-After (1 s)
  // reaches just past the edge. The shift is set again right before the SDK's call, however long the first took.
  const windowEnd = Math.floor(clock.now() / MINUTE) * MINUTE + MINUTE;
  shifted.offset = windowEnd - 5000 - Date.now();
  expectOk(await chatWith(gateway, key, { model: MODEL }));
  shifted.offset = windowEnd - 700 - Date.now();

  const attempts: Array<{ at: number; status: number; retryAfter: string | null }> = [];
  const client = new OpenAI({
    apiKey: key,
    baseURL: gateway.baseURL,
    maxRetries: 2,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      attempts.push({ at: performance.now(), status: response.status, retryAfter: response.headers.get('retry-after') });
      return response;
    },
  });
  const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'again' }] });
  expect(completion.choices[0]?.message.content).toBeTruthy();
  expect(attempts.map((attempt) => attempt.status)).toEqual([429, 200]);
  const [refused, retried] = attempts as [typeof attempts[number], typeof attempts[number]];
  expect(refused.retryAfter).toBe('1');
  expect(retried.at - refused.at).toBeGreaterThanOrEqual(950);
});
