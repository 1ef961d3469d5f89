import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { scanFields, startFloorProxy } from '../../../bench/floor-proxy.js';

const CALLER_KEY = 'sk-floor-caller';
const UPSTREAM_KEY = 'sk-floor-upstream';

/** Anthropic's stream for one answer: input tokens in message_start, the final output count in message_delta. */
const ANTHROPIC_EVENTS = [
  'event: message_start\ndata: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-x","usage":{"input_tokens":1234,"cache_creation_input_tokens":500,"cache_read_input_tokens":9000,"output_tokens":1}}}\n\n',
  'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n',
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello \\"usage\\": not this"}}\n\n',
  'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n',
  'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":56}}\n\n',
  'event: message_stop\ndata: {"type":"message_stop"}\n\n',
].join('');
/** OpenAI's stream with include_usage: `"usage":null` in every chunk but the last. */
const OPENAI_EVENTS = [
  'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"Hi"}}],"usage":null}\n\n',
  'data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":77,"completion_tokens":9,"total_tokens":86,"prompt_tokens_details":{"cached_tokens":70}}}\n\n',
  'data: [DONE]\n\n',
].join('');
const ANTHROPIC_JSON = '{"id":"msg_2","type":"message","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":40,"output_tokens":3}}';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A mock upstream answering each of the three answers above, in small pieces that cut events in two. */
async function mockUpstream(): Promise<{ origin: string; seen: Array<{ key: string | undefined; body: string }> }> {
  const seen: Array<{ key: string | undefined; body: string }> = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const key = request.headers['x-api-key'] ?? request.headers.authorization;
      seen.push({ key: Array.isArray(key) ? key[0] : key, body });
      const parsed = JSON.parse(body) as { stream?: boolean };
      if (!parsed.stream) {
        response.writeHead(200, { 'content-type': 'application/json' }).end(ANTHROPIC_JSON);
        return;
      }
      const text = request.url?.startsWith('/v1/messages') ? ANTHROPIC_EVENTS : OPENAI_EVENTS;
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      let at = 0;
      const next = (): void => {
        if (at >= text.length) return void response.end();
        response.write(text.slice(at, at + 37));
        at += 37;
        setTimeout(next, 1);
      };
      next();
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  cleanups.push(() => new Promise<void>((done) => server.close(() => done())));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

async function floor(origin: string, findFields: 'parse' | 'scan') {
  const dir = mkdtempSync(join(tmpdir(), 'floor-proxy-'));
  const dbPath = join(dir, 'floor.db');
  const logged: string[] = [];
  const proxy = await startFloorProxy({ upstream: origin, upstreamKey: UPSTREAM_KEY, key: CALLER_KEY, dbPath, findFields, writeLog: (text) => logged.push(text), inputNanoPerToken: 3_000, cacheReadNanoPerToken: 300, cacheWriteNanoPerToken: 3_750, outputNanoPerToken: 15_000 });
  let closed = false;
  const close = async (): Promise<void> => {
    if (!closed) await proxy.close();
    closed = true;
  };
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(close);
  /** Closes the floor (its queued rows and lines written) and reads what it stored. */
  const stored = async () => {
    await close();
    const db = new DatabaseSync(dbPath);
    try {
      return {
        usage: db.prepare('select model, status, input_tokens, cache_read_tokens, cache_write_tokens, output_tokens, cost_nano, id from usage_rows order by id').all(),
        ledger: db.prepare('select usage_id, amount_nano from ledger order by id').all(),
        balance: db.prepare('select balance_nano from balances').get(),
        lines: logged.join('').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line) as { status: number }),
      };
    } finally {
      db.close();
    }
  };
  return { url: proxy.url, stored };
}

const send = (url: string, headers: Record<string, string>, body: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

describe.each(['parse', 'scan'] as const)('floor proxy (bench yardstick), fields found by %s', (findFields) => {
  it('forwards a streamed Anthropic answer byte for byte and bills the usage its events carry', async () => {
    const upstream = await mockUpstream();
    const proxy = await floor(upstream.origin, findFields);
    // A nested `model` is not the request's.
    const body = JSON.stringify({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi "there"', model: 'nested' }] }], model: 'claude-x', max_tokens: 100, stream: true });
    const answer = await send(`${proxy.url}/v1/messages?beta=true`, { 'x-api-key': CALLER_KEY, 'anthropic-version': '2023-06-01' }, body);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/event-stream');
    expect(Buffer.from(await answer.arrayBuffer()).equals(Buffer.from(ANTHROPIC_EVENTS))).toBe(true);
    // The caller's own bytes went on, under the upstream's key.
    expect(upstream.seen).toEqual([{ key: UPSTREAM_KEY, body }]);

    const { usage, ledger, balance, lines } = await proxy.stored();
    const cost = 1234 * 3_000 + 9000 * 300 + 500 * 3_750 + 56 * 15_000;
    expect(usage).toEqual([{ model: 'claude-x', status: 200, input_tokens: 1234, cache_read_tokens: 9000, cache_write_tokens: 500, output_tokens: 56, cost_nano: cost, id: 1 }]);
    expect(ledger).toEqual([{ usage_id: 1, amount_nano: -cost }]);
    expect(balance).toEqual({ balance_nano: 1e15 - cost });
    expect(lines).toEqual([expect.objectContaining({ status: 200, model: 'claude-x', input_tokens: 1234, output_tokens: 56, cost_nano: cost })]);
  });

  it('finds OpenAI usage in the last chunk and in a whole answer', async () => {
    const upstream = await mockUpstream();
    const proxy = await floor(upstream.origin, findFields);
    const streamed = await send(`${proxy.url}/chat/completions`, { authorization: `Bearer ${CALLER_KEY}` }, JSON.stringify({ model: 'gpt-x', stream: true, messages: [] }));
    expect(await streamed.text()).toBe(OPENAI_EVENTS);
    const whole = await send(`${proxy.url}/v1/messages`, { 'x-api-key': CALLER_KEY }, JSON.stringify({ model: 'claude-x', messages: [] }));
    expect(await whole.text()).toBe(ANTHROPIC_JSON);
    expect(upstream.seen.map((request) => request.key)).toEqual([`Bearer ${UPSTREAM_KEY}`, UPSTREAM_KEY]);

    const { usage, ledger } = await proxy.stored();
    expect(usage.map((row) => [row.model, row.input_tokens, row.cache_read_tokens, row.output_tokens])).toEqual([['gpt-x', 7, 70, 9], ['claude-x', 40, 0, 3]]);
    expect(ledger.map((row) => row.amount_nano)).toEqual([-(7 * 3_000 + 70 * 300 + 9 * 15_000), -(40 * 3_000 + 3 * 15_000)]);
  });

  it('refuses a wrong or missing key with 401 without calling the upstream or billing', async () => {
    const upstream = await mockUpstream();
    const proxy = await floor(upstream.origin, findFields);
    const body = JSON.stringify({ model: 'claude-x', stream: true, messages: [] });
    expect((await send(`${proxy.url}/v1/messages`, { 'x-api-key': 'sk-wrong' }, body)).status).toBe(401);
    expect((await send(`${proxy.url}/chat/completions`, { authorization: 'Bearer sk-wrong' }, body)).status).toBe(401);
    expect((await send(`${proxy.url}/v1/messages`, {}, body)).status).toBe(401);
    expect(upstream.seen).toEqual([]);

    const { usage, ledger, lines } = await proxy.stored();
    expect(usage).toEqual([]);
    expect(ledger).toEqual([]);
    // Refusals are logged too: one access-log line per request.
    expect(lines.map((line) => line.status)).toEqual([401, 401, 401]);
  });
});

describe('scanFields', () => {
  it('finds the top-level members as JSON.parse does, past nested ones, escapes and spaces', () => {
    const bodies = [
      '{"messages":[{"model":"evil","stream":true,"max_tokens":1}],"model":"m\\\\","x":{"max_tokens":1},"stream" : false ,"max_tokens":12}',
      ' {"model":"a\\"b\\u00e9","stream":true}',
      '{"system":"say \\"model\\": \\"x\\"","model":"claude-x","metadata":{"model":"y"}}',
    ];
    for (const body of bodies) {
      const parsed = JSON.parse(body) as Record<string, unknown>;
      expect(scanFields(Buffer.from(body))).toEqual({ model: parsed.model, ...('stream' in parsed ? { stream: parsed.stream } : {}), ...('max_tokens' in parsed ? { max_tokens: parsed.max_tokens } : {}) });
    }
  });

  it('answers undefined where the bytes hold no object', () => {
    for (const body of ['[1]', '{"model":"x"', 'nope', '']) expect(scanFields(Buffer.from(body))).toBeUndefined();
  });
});
