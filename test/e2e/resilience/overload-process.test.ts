/**
 * Overload of a real `unigate serve` process: an open-loop flood (requests at a fixed rate, whatever comes back) well
 * above what one process serves, sent by the bench's generator processes, to a gateway shedding on its event-loop
 * delay (ADMISSION_QUEUE_TARGET_MS at its default). Judged inside the gateway, by its own
 * `unigate_admission_latency_seconds` histogram and 2xx count: it refuses quickly with 503 `overloaded`, answers
 * nothing else, and every request it admitted ends in a 2xx unless its caller left. Loose bounds and relations, not
 * absolute times: the machine running the tests is small and shared (how long admitted requests take there says more
 * about the neighbours than about the gateway; the bench's `overload 2x` reads that on a quiet machine).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readAdmission, type AdmissionSnapshot } from '../../../bench/admission-reading.js';
import { configureGateway } from '../../../bench/configure-gateway.js';
import { openLoop, type OpenLoopResult } from '../../../bench/open-loop.js';
import { BENCH_MODEL, openAIChatRequest } from '../../../bench/requests.js';
import { quantileBetweenMs } from '../../../bench/loop-holds.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { assertBuilt, cleanEnv, freePort, killAll, REPO_ROOT, startCommand, waitForHttp, type RunningCommand } from '../cli/cli-process.js';

/** Far above one process's capacity on any machine of this project (about 3,400 req/s on a quiet one). */
const RATE_PER_SEC = 6000;
const SECONDS = 4;

interface FloodReading {
  client: OpenLoopResult;
  /** Inside the gateway, over the flood: answers by outcome, their p50 and p99 (bucket bounds, ms), and the 2xx. */
  gateway: { admitted: number; ok2xx: number; admittedP50Ms: number | null; admittedP99Ms: number | null; refused: number; refusedP99Ms: number | null };
}

function between(before: AdmissionSnapshot, after: AdmissionSnapshot): FloodReading['gateway'] {
  const of = (snapshot: AdmissionSnapshot, outcome: string) => snapshot.byOutcome.get(outcome);
  const count = (outcome: string): number => (of(after, outcome)?.count ?? 0) - (of(before, outcome)?.count ?? 0);
  return {
    admitted: count('admitted'),
    ok2xx: after.ok2xx - before.ok2xx,
    admittedP50Ms: quantileBetweenMs(of(before, 'admitted'), of(after, 'admitted'), 0.5),
    admittedP99Ms: quantileBetweenMs(of(before, 'admitted'), of(after, 'admitted'), 0.99),
    refused: count('refused'),
    refusedP99Ms: quantileBetweenMs(of(before, 'refused'), of(after, 'refused'), 0.99),
  };
}

let directory: string;
let upstream: MockOpenAIUpstream;
const started: RunningCommand[] = [];

/** Starts a gateway with this queue target, floods it for SECONDS, and reads it before and after. */
async function floodGateway(name: string, queueTargetMs: string): Promise<FloodReading> {
  const [port, consolePort] = [await freePort(), await freePort()];
  const adminToken = `adm_overload_${name}_0123456789abcdef`;
  const dataDirectory = path.join(directory, name);
  const base = `http://127.0.0.1:${port}`;
  const handle = startCommand(['serve'], directory, cleanEnv({
    HOST: '127.0.0.1',
    PORT: String(port),
    CONSOLE_PORT: String(consolePort),
    ADMIN_TOKEN: adminToken,
    DATA_DIR: dataDirectory,
    DATABASE_URL: `sqlite:${path.join(dataDirectory, 'gateway.db')}`,
    ACCESS_LOG: 'off',
    MAX_CONNECTIONS_PER_IP: '5000',
    ADMISSION_QUEUE_TARGET_MS: queueTargetMs,
    // Eight accepting sockets let the flood reach the process at once: with one, most of it waits for its connection in
    // the kernel's accept queue and the client's, where no shedding can see it, and a quiet machine served the whole
    // flood late but unrefused. The shedding is what is under test.
    ACCEPT_SOCKETS: '8',
  }));
  started.push(handle);
  try {
    await waitForHttp(`${base}/api/status`, handle, 20_000);
    const key = await configureGateway(base, adminToken, upstream.url);
    const spec = openAIChatRequest(`${base}/v1/chat/completions`, key, BENCH_MODEL, false);
    const before = await readAdmission(base, adminToken);
    const client = await openLoop(spec, RATE_PER_SEC, SECONDS, {
      processes: 2,
      maxConnections: 1500,
      timeoutMs: 15_000,
      workDir: dataDirectory,
      generatorEntry: path.join(REPO_ROOT, 'dist', 'bench', 'open-loop-generator.js'),
    });
    const after = await readAdmission(base, adminToken);
    if (before === null || after === null) throw new Error(`${name}: /metrics unreadable`);
    return { client, gateway: between(before, after) };
  } finally {
    handle.kill();
    await handle.exited;
  }
}

describe('a saturated gateway process', () => {
  beforeAll(async () => {
    assertBuilt();
    directory = await mkdtemp(path.join(tmpdir(), 'unigate-overload-'));
    upstream = await startMockOpenAIUpstream({ recordRequests: false });
  });

  afterAll(async () => {
    for (const handle of started) handle.kill();
    killAll();
    await upstream?.close();
    await rm(directory, { recursive: true, force: true });
  });

  it('refuses quickly with 503 overloaded, answers nothing else, and drops no admitted request', async () => {
    const shedding = await floodGateway('shedding', '20');
    const summary = JSON.stringify({ gateway: shedding.gateway, client: { sent: shedding.client.sent, admitted: shedding.client.admitted, shed: shedding.client.shed, failures: shedding.client.failures, timedOut: shedding.client.timedOut } });

    // It was saturated and shed, with the spec's 503 (the generator counts only 503s as shed).
    expect(shedding.gateway.refused, summary).toBeGreaterThan(0);
    expect(shedding.client.shed, summary).toBeGreaterThan(0);
    expect(shedding.gateway.admitted, summary).toBeGreaterThan(0);
    // The gateway answered nothing but 2xx and 503: the client's failures, if any, are connections the kernel reset
    // or left waiting past the timeout (a flood beyond the accept queue), never an HTTP answer; and an admitted
    // request that did not end in a 2xx is one whose caller had left (the generator closes a connection whose
    // request timed out): none was dropped by the gateway.
    expect(Object.keys(shedding.client.failures).filter((reason) => /^\d/.test(reason)), summary).toEqual([]);
    const callerLeft = shedding.client.timedOut + Object.values(shedding.client.failures).reduce((sum, count) => sum + count, 0);
    // The reading taken before the flood is itself one admitted answer, observed after its text was rendered (an
    // admin answer, which the 2xx count leaves out).
    const readingItself = 1;
    expect(shedding.gateway.admitted - readingItself - shedding.gateway.ok2xx, summary).toBeLessThanOrEqual(callerLeft);
    expect(shedding.client.admitted, summary).toBeLessThanOrEqual(shedding.gateway.ok2xx);
    expect(shedding.gateway.ok2xx - shedding.client.admitted, summary).toBeLessThanOrEqual(shedding.client.timedOut);
    // A refusal waits for nothing: its p99 is within 100 ms inside the gateway (a few ms on a quiet machine), and not
    // above the admitted requests' median.
    expect(shedding.gateway.refusedP99Ms!, summary).toBeLessThanOrEqual(100);
    expect(shedding.gateway.refusedP99Ms!, summary).toBeLessThanOrEqual(shedding.gateway.admittedP50Ms!);
  }, 120_000);
});
