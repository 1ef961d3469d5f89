/**
 * A streamed answer of many megabytes goes through the gateway in time that grows with its length, not with its
 * square: pass-through (chat completions, Responses) and translated (an OpenAI upstream answering Anthropic's and
 * Gemini's clients), and over the Responses API's WebSocket mode. Checkpoints run every third of a second here, so a checkpoint that re-read or re-counted the
 * whole answer so far would make the 20 MiB stream cost far more than four times the 5 MiB one. The stream is
 * billed at the usage the upstream reported at its end.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { addRoutedModel, flushWrites, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { LARGE_STREAM_DELTA, reportedOutputTokens, startLargeStreamUpstream, type LargeStreamUpstream } from '../../support/mock-large-stream-upstream.js';

const SMALL_MB = 5;
const LARGE_MB = 20;
/** Linear growth makes the large stream take four to seven times the small one (fixed costs weigh on the small); a checkpoint that re-counts the whole answer made it 16 to 57 times. */
const MAX_RATIO = 12;
/** A 20 MiB stream takes a second or two on a quiet machine. */
const LARGE_BOUND_MS = 45_000;

let gateway: TestGateway;
let upstream: LargeStreamUpstream;
let account: SeededAccount;

beforeAll(async () => {
  upstream = await startLargeStreamUpstream();
  // Checkpoints every 333 ms (a sixth of the staleness), so a long stream passes many of them.
  gateway = await startTestGateway({ env: { INSTANCE_STALE_SECONDS: '2' } });
  await addRoutedModel(gateway, { model: 'big', pricing: { input_per_mtok: 1, output_per_mtok: 1 }, channel: { name: 'large-stream', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: { big: 'big' } } });
  await gateway.gateway.services.catalog.reload();
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

interface Family {
  name: string;
  request: (megabytes: number) => { path: string; headers: Record<string, string>; body: unknown };
  /** Text at the end of a stream that ended as it should. */
  ending: string;
}

const FAMILIES: Family[] = [
  {
    name: 'chat completions, passed through',
    request: (megabytes) => ({ path: '/v1/chat/completions', headers: { authorization: `Bearer ${account.key}` }, body: { model: 'big', stream: true, messages: [{ role: 'user', content: `stream ${megabytes} MB` }] } }),
    ending: 'data: [DONE]',
  },
  {
    name: 'Responses, passed through',
    request: (megabytes) => ({ path: '/v1/responses', headers: { authorization: `Bearer ${account.key}` }, body: { model: 'big', stream: true, input: `stream ${megabytes} MB` } }),
    ending: 'response.completed',
  },
  {
    name: 'Anthropic Messages, translated',
    request: (megabytes) => ({ path: '/v1/messages', headers: { 'x-api-key': account.key, 'anthropic-version': '2023-06-01' }, body: { model: 'big', stream: true, max_tokens: 64000, messages: [{ role: 'user', content: `stream ${megabytes} MB` }] } }),
    ending: 'message_stop',
  },
  {
    name: 'Gemini, translated',
    request: (megabytes) => ({ path: '/v1beta/models/big:streamGenerateContent?alt=sse', headers: { 'x-goog-api-key': account.key }, body: { contents: [{ role: 'user', parts: [{ text: `stream ${megabytes} MB` }] }] } }),
    ending: '"finishReason"',
  },
];

/** The run that took least time. */
function fastestOf<T extends { ms: number }>(results: T[]): T {
  return results.reduce((best, result) => (result.ms < best.ms ? result : best));
}

/** Streams one answer to the end: how long it took, how many deltas arrived and how it ended. */
async function streamAnswer(family: Family, megabytes: number): Promise<{ ms: number; deltas: number; tail: string; requestId: string }> {
  const { path, headers, body } = family.request(megabytes);
  const started = performance.now();
  const response = await fetch(`${gateway.url}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (response.status !== 200) throw new Error(`${response.status}: ${await response.text()}`);
  const decoder = new TextDecoder();
  let deltas = 0;
  let carry = '';
  let tail = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    const text = carry + decoder.decode(chunk, { stream: true });
    deltas += text.split(LARGE_STREAM_DELTA).length - 1;
    carry = text.slice(-LARGE_STREAM_DELTA.length);
    // A delta cut between chunks is counted once: the carried text holds no whole delta.
    if (carry === LARGE_STREAM_DELTA) carry = '';
    tail = (tail + text).slice(-4096);
  }
  return { ms: performance.now() - started, deltas, tail, requestId: response.headers.get('x-request-id') ?? '' };
}

describe.each(FAMILIES)('a stream of many megabytes ($name)', (family) => {
  it(`streams ${SMALL_MB} and ${LARGE_MB} MiB whole, in time that grows about linearly, billed at the reported usage`, async () => {
    // An account per family: millions of tokens a minute would run into one key's token limits.
    account = await seedAccount(gateway, { balanceUsd: 1000 });
    // Warm up (tokenizer, connection pool) so the small stream's time is not mostly first-use costs.
    await streamAnswer(family, 0.5);
    // Two runs of each size, interleaved, and the faster of each compared: a stall of the loaded machine can slow
    // any single run, seldom both runs of one size.
    const runs: Array<readonly [Awaited<ReturnType<typeof streamAnswer>>, number]> = [];
    for (let round = 0; round < 2; round += 1) runs.push([await streamAnswer(family, SMALL_MB), SMALL_MB] as const, [await streamAnswer(family, LARGE_MB), LARGE_MB] as const);
    const small = fastestOf(runs.filter(([, megabytes]) => megabytes === SMALL_MB).map(([result]) => result));
    const large = fastestOf(runs.filter(([, megabytes]) => megabytes === LARGE_MB).map(([result]) => result));
    for (const [result, megabytes] of runs) {
      expect(result.tail).toContain(family.ending);
      // Every delta the upstream sent arrived (the count may differ by the one delta cut at a chunk boundary).
      expect(Math.abs(result.deltas - Math.ceil((megabytes * 1024 * 1024) / LARGE_STREAM_DELTA.length))).toBeLessThanOrEqual(2);
    }
    console.log(`${family.name}: ${SMALL_MB} MiB in ${small.ms.toFixed(0)} ms, ${LARGE_MB} MiB in ${large.ms.toFixed(0)} ms`);
    expect(large.ms).toBeLessThan(LARGE_BOUND_MS);
    expect(large.ms / small.ms).toBeLessThan(MAX_RATIO);
    await flushWrites(gateway);
    const rows = await gateway.admin<{ data: Array<{ request_id: string; completion_tokens: number; status: number }> }>('GET', `/admin/usage?key_id=${account.keyId}&limit=10`);
    const row = rows.body.data.find((entry) => entry.request_id === large.requestId);
    expect(row?.status).toBe(200);
    expect(row?.completion_tokens).toBe(reportedOutputTokens(Math.round(LARGE_MB * 1024 * 1024)));
  }, 180_000);
});

/** One `response.create` over the Responses WebSocket mode, read to its `response.completed`. */
async function streamOverSocket(megabytes: number): Promise<{ ms: number; deltas: number; completed: boolean }> {
  const socket = new WebSocket(`${gateway.baseURL.replace(/^http/, 'ws')}/responses`, { headers: { authorization: `Bearer ${account.key}` } });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const started = performance.now();
  let deltas = 0;
  const completed = await new Promise<boolean>((resolve) => {
    socket.on('message', (data) => {
      const text = (data as Buffer).toString('utf8');
      if (text.includes('"response.output_text.delta"')) deltas += 1;
      else if (text.includes('"response.completed"')) resolve(true);
      else if (text.includes('"type":"error"')) resolve(false);
    });
    socket.once('close', () => resolve(false));
    socket.send(JSON.stringify({ type: 'response.create', model: 'big', input: `stream ${megabytes} MB` }));
  });
  const ms = performance.now() - started;
  socket.close();
  return { ms, deltas, completed };
}

describe('a stream of many megabytes over the Responses WebSocket mode', () => {
  it(`streams ${SMALL_MB} and ${LARGE_MB} MiB whole, in time that grows about linearly`, async () => {
    account = await seedAccount(gateway, { balanceUsd: 1000 });
    await streamOverSocket(0.5);
    const runs: Array<readonly [Awaited<ReturnType<typeof streamOverSocket>>, number]> = [];
    for (let round = 0; round < 2; round += 1) runs.push([await streamOverSocket(SMALL_MB), SMALL_MB] as const, [await streamOverSocket(LARGE_MB), LARGE_MB] as const);
    const small = fastestOf(runs.filter(([, megabytes]) => megabytes === SMALL_MB).map(([result]) => result));
    const large = fastestOf(runs.filter(([, megabytes]) => megabytes === LARGE_MB).map(([result]) => result));
    for (const [result, megabytes] of runs) {
      expect(result.completed).toBe(true);
      expect(result.deltas).toBe(Math.ceil((megabytes * 1024 * 1024) / LARGE_STREAM_DELTA.length));
    }
    console.log(`Responses over WebSocket: ${SMALL_MB} MiB in ${small.ms.toFixed(0)} ms, ${LARGE_MB} MiB in ${large.ms.toFixed(0)} ms`);
    expect(large.ms).toBeLessThan(LARGE_BOUND_MS);
    expect(large.ms / small.ms).toBeLessThan(MAX_RATIO);
  }, 180_000);
});
