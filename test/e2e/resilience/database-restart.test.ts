/**
 * PostgreSQL restarted under load, against two real `unigate serve` processes on a server of the test's own: no
 * instance dies, every request while the database is away answers 200 (served from what the instance holds) or 503
 * with Retry-After in the caller's family, /readyz says unready meanwhile, the instances reconnect by themselves,
 * and the books balance afterwards. Repeated (RESTART_ROUNDS, default 5) to catch the checked-out-client race.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAll, freePort, runCommand, cleanEnv } from '../cli/cli-process.js';
import { call } from '../admin/helpers.js';
import { startServeCluster, type ServeCluster } from '../serve-cluster.js';
import { familyErrorProblem, type Family } from '../../support/family-error.js';
import { createPrivatePostgresCluster, postgresBinaries, type PrivatePostgresCluster } from '../../support/private-postgres-cluster.js';

const MODEL = 'restart-model';
const YAML = [
  'models:',
  `  - { id: ${MODEL}, pricing: { input_per_mtok: 1, output_per_mtok: 2 } }`,
  'channels:',
  `  - { name: restart-sim, type: simulator, models: [${MODEL}], settings: { output_tokens: 8, latency_ms: 5 } }`,
];
const ROUNDS = Number(process.env.RESTART_ROUNDS ?? 5);
const DOWN_MS = Number(process.env.RESTART_DOWN_MS ?? 3000);
const CALLERS = 6;

interface Outcome {
  instance: number;
  family: Family;
  status: number;
  retryAfter: string | null;
  problem: string | null;
  at: number;
}

function request(family: Family, url: string, key: string): Promise<Response> {
  const signal = AbortSignal.timeout(20_000);
  switch (family) {
    case 'openai':
      return fetch(`${url}/v1/chat/completions`, {
        method: 'POST', signal, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'hello there' }], max_tokens: 8 }),
      });
    case 'anthropic':
      return fetch(`${url}/v1/messages`, {
        method: 'POST', signal, headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({ model: MODEL, max_tokens: 8, messages: [{ role: 'user', content: 'hello there' }] }),
      });
    case 'gemini':
      return fetch(`${url}/v1beta/models/${MODEL}:generateContent`, {
        method: 'POST', signal, headers: { 'x-goog-api-key': key, 'content-type': 'application/json' },
        body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hello there' }] }], generationConfig: { maxOutputTokens: 8 } }),
      });
  }
}

async function send(instance: number, family: Family, url: string, key: string): Promise<Outcome> {
  const response = await request(family, url, key);
  const text = await response.text();
  return {
    instance,
    family,
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    problem: response.status === 200 ? null : familyErrorProblem(family, text),
    at: performance.now(),
  };
}

/** Callers spread over both instances and all three families, until `stop` is set. */
function load(cluster: ServeCluster, key: string, outcomes: Outcome[], stop: { done: boolean }): Promise<void> {
  const families: Family[] = ['openai', 'anthropic', 'gemini'];
  return Promise.all(Array.from({ length: CALLERS }, async (_unused, caller) => {
    for (let index = 0; !stop.done && index < 100_000; index += 1) {
      const instance = (caller + index) % cluster.instances.length;
      const family = families[(caller + index) % families.length] as Family;
      try {
        outcomes.push(await send(instance, family, cluster.instances[instance]?.url ?? '', key));
      } catch (error) {
        outcomes.push({ instance, family, status: 0, retryAfter: null, problem: `no answer: ${String(error)}`, at: performance.now() });
      }
    }
  })).then(() => undefined);
}

async function readyz(url: string): Promise<number> {
  return (await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(5000) })).status;
}

describe.skipIf(postgresBinaries() === null)('PostgreSQL restart under load (two instances)', () => {
  let server: PrivatePostgresCluster;
  let cluster: ServeCluster;
  let key = '';
  let accountId = '';

  beforeAll(async () => {
    server = await createPrivatePostgresCluster(await freePort());
    const admin = new pg.Client({ connectionString: server.url() });
    await admin.connect();
    await admin.query('CREATE DATABASE gateway');
    await admin.end();
    cluster = await startServeCluster(2, YAML, { DATABASE_URL: server.url('gateway') });
    const account = await cluster.admin<{ id: string }>('POST', '/admin/accounts', { email: 'restart@example.com' });
    accountId = account.body.id;
    expect((await cluster.admin('POST', `/admin/accounts/${accountId}/credits`, { amount_usd: 100 })).status).toBe(200);
    key = (await cluster.admin<{ key: string }>('POST', `/admin/accounts/${accountId}/keys`, {})).body.key;
  }, 120_000);

  afterAll(async () => {
    killAll();
    await cluster?.close();
    await server?.destroy();
  }, 60_000);

  it(`survives ${ROUNDS} restarts: 200 or 503 + Retry-After in the family's shape, unready while down, back by itself`, async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const outcomes: Outcome[] = [];
      const stop = { done: false };
      const running = load(cluster, key, outcomes, stop);
      await new Promise((resolve) => setTimeout(resolve, 500));
      await server.stop();
      const downAt = performance.now();
      await new Promise((resolve) => setTimeout(resolve, DOWN_MS / 2));
      for (const instance of cluster.instances) {
        expect(await readyz(instance.url), `${instance.name} /readyz while the database is down`).toBe(503);
        expect((await call(instance.url, 'GET', '/healthz')).status).toBe(200);
      }
      await new Promise((resolve) => setTimeout(resolve, DOWN_MS / 2));
      await server.start();
      const upAt = performance.now();
      const deadline = upAt + 20_000;
      const answeredAgain = (index: number): boolean => outcomes.some((outcome) => outcome.instance === index && outcome.at > upAt && outcome.status === 200);
      while (performance.now() < deadline && !cluster.instances.every((_instance, index) => answeredAgain(index))) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      stop.done = true;
      await running;

      const during = outcomes.filter((outcome) => outcome.at > downAt && outcome.at < upAt);
      const firstOkAfter = outcomes.find((outcome) => outcome.at > upAt && outcome.status === 200);
      const unavailable = during.filter((outcome) => outcome.status === 503).length;
      console.log(`round ${round + 1}: ${outcomes.length} requests, ${during.length} while down (${unavailable} answered 503), first 200 ${firstOkAfter === undefined ? 'never' : `${Math.round(firstOkAfter.at - upAt)} ms`} after the database was back`);

      const wrong = outcomes.filter((outcome) => outcome.status !== 200 && (outcome.status !== 503 || outcome.retryAfter === null || outcome.problem !== null));
      expect(wrong.slice(0, 5), `answers other than 200 / 503 with Retry-After in the family's shape (${wrong.length})`).toEqual([]);
      expect(unavailable).toBeGreaterThan(0);
      cluster.instances.forEach((instance, index) => expect(answeredAgain(index), `${instance.name} answered 200 again`).toBe(true));
      for (const instance of cluster.instances) {
        expect(instance.process.hasExited(), `${instance.name} died: ${instance.process.stderr().slice(-2000)}`).toBe(false);
        expect(await readyz(instance.url), `${instance.name} /readyz after the database is back`).toBe(200);
      }
    }

    const check = await runCommand(['ledger', 'check'], cluster.directory, cleanEnv({ ...cluster.environment, DATABASE_URL: server.url('gateway') }), 60_000);
    expect(check.code, check.stdout + check.stderr).toBe(0);
  }, 60_000 + ROUNDS * 40_000);
});
