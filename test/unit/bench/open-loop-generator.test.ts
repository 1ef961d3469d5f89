import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Http1ParseError, Http1ResponseReader, type Http1Response } from '../../../bench/http1-response-reader.js';
import { encodeRequest, runOpenLoopProcess, type OpenLoopConfig } from '../../../bench/open-loop-generator.js';
import { openLoopTimeline } from '../../../bench/open-loop.js';

interface WireResponse {
  status: number;
  body: Buffer;
  framing: 'length' | 'chunked' | 'close';
  /** Sizes the chunked body is cut into (chunked only). */
  chunkSizes: number[];
  extraHeaders: Array<[string, string]>;
}

/** The bytes a server would send for `r`. */
function encodeResponse(r: WireResponse): Buffer {
  const head = [`HTTP/1.1 ${r.status} X`, ...r.extraHeaders.map(([n, v]) => `${n}: ${v}`)];
  if (r.framing === 'length') head.push(`Content-Length: ${r.body.length}`);
  if (r.framing === 'chunked') head.push('Transfer-Encoding: chunked');
  if (r.framing === 'close') head.push('Connection: close');
  const parts: Buffer[] = [Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'latin1')];
  if (r.framing === 'chunked') {
    let at = 0;
    for (const size of r.chunkSizes) {
      if (at >= r.body.length) break;
      const piece = r.body.subarray(at, at + Math.max(1, size));
      parts.push(Buffer.from(`${piece.length.toString(16)};ext=1\r\n`), piece, Buffer.from('\r\n'));
      at += piece.length;
    }
    if (at < r.body.length) parts.push(Buffer.from(`${(r.body.length - at).toString(16)}\r\n`), r.body.subarray(at), Buffer.from('\r\n'));
    parts.push(Buffer.from('0\r\nx-trailer: 1\r\n\r\n'));
  } else parts.push(r.body);
  return Buffer.concat(parts);
}

const wireResponse: fc.Arbitrary<WireResponse> = fc.record({
  status: fc.constantFrom(200, 201, 429, 500, 503),
  body: fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  framing: fc.constantFrom('length' as const, 'chunked' as const),
  chunkSizes: fc.array(fc.integer({ min: 1, max: 80 }), { maxLength: 6 }),
  extraHeaders: fc.array(fc.tuple(fc.constantFrom('x-a', 'Content-Type', 'Date'), fc.stringMatching(/^[a-z0-9 /;=-]{0,20}$/)), { maxLength: 3 }),
});

/** Feeds `bytes` to a reader in pieces cut at `cuts`, then ends it. */
function readAll(bytes: Buffer, cuts: number[]): Http1Response[] {
  const out: Http1Response[] = [];
  const reader = new Http1ResponseReader((r) => out.push({ ...r, body: Buffer.from(r.body) }));
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const point of [...points, bytes.length]) {
    if (point > from) reader.push(bytes.subarray(from, point));
    from = Math.max(from, point);
  }
  reader.end();
  return out;
}

describe('open-loop generator: HTTP/1.1 response reader', () => {
  it('reads any sequence of length-framed and chunked responses the same however the bytes are cut', () => {
    fc.assert(fc.property(fc.array(wireResponse, { minLength: 1, maxLength: 5 }), fc.array(fc.nat(), { maxLength: 12 }), (responses, cuts) => {
      const bytes = Buffer.concat(responses.map(encodeResponse));
      const read = readAll(bytes, cuts);
      expect(read.map((r) => r.status)).toEqual(responses.map((r) => r.status));
      expect(read.map((r) => r.body.toString('hex'))).toEqual(responses.map((r) => r.body.toString('hex')));
      expect(read.every((r) => r.keepAlive)).toBe(true);
    }), { numRuns: 300 });
  });

  it('reads a body without a length up to the close, and says the connection ends', () => {
    const response: WireResponse = { status: 200, body: Buffer.from('{"ok":true}'), framing: 'close', chunkSizes: [], extraHeaders: [] };
    const read = readAll(encodeResponse(response), [5, 30]);
    expect(read).toHaveLength(1);
    expect(read[0]!.body.toString()).toBe('{"ok":true}');
    expect(read[0]!.keepAlive).toBe(false);
  });

  it('gives nothing for a response cut short, and refuses bytes that are not HTTP', () => {
    const whole = encodeResponse({ status: 200, body: Buffer.from('0123456789'), framing: 'length', chunkSizes: [], extraHeaders: [] });
    expect(readAll(whole.subarray(0, whole.length - 1), [])).toEqual([]);
    const reader = new Http1ResponseReader(() => {});
    expect(() => reader.push(Buffer.from('SSH-2.0-OpenSSH\r\n\r\n'))).toThrow(Http1ParseError);
  });
});

describe('open-loop timeline', () => {
  it('groups the answers of every process by the second their requests were scheduled in', () => {
    const timeline = openLoopTimeline([
      { admittedMs: [5, 900, 7], admittedScheduledMs: [10, 999.9, 1000], shedScheduledMs: [2500] },
      { admittedMs: [3], admittedScheduledMs: [20], shedScheduledMs: [1500, 1999] },
    ]);
    expect(timeline.map((s) => [s.second, s.admitted, s.shed])).toEqual([[0, 3, 0], [1, 1, 2], [2, 0, 1]]);
    expect(timeline[0]!.admittedP99Ms).toBe(900);
    expect(timeline[1]!.admittedP50Ms).toBe(7);
    expect(timeline[2]!.admittedP50Ms).toBeUndefined();
  });
});

describe('open-loop generator: one process against a real server', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
    server = undefined;
  });

  const listen = async (handler: Parameters<typeof createServer>[1]): Promise<string> => {
    server = createServer(handler);
    await new Promise<void>((done) => server!.listen(0, '127.0.0.1', done));
    return `http://127.0.0.1:${(server!.address() as AddressInfo).port}/v1/chat?x=1`;
  };

  const config = (url: string, over: Partial<OpenLoopConfig> = {}): OpenLoopConfig => ({
    url,
    headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
    body: '{"model":"m"}',
    marker: '"ok"',
    ratePerSec: 400,
    seconds: 0.5,
    timeoutMs: 1000,
    maxConnections: 50,
    startAtEpochMs: Date.now(),
    resultPath: '/dev/null',
    ...over,
  });

  it('sends the request as written at the rate asked, on reused connections, and sorts the answers', async () => {
    const seen: string[] = [];
    let count = 0;
    const url = await listen((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        seen.push(`${req.method} ${req.url} ${req.headers.authorization} ${body}`);
        count += 1;
        if (count % 10 === 0) {
          res.writeHead(503, { 'retry-after': '1' }).end('{"error":{"type":"overloaded"}}');
        } else if (count % 10 === 1) {
          // chunked, the way streamed or unsized answers come
          res.writeHead(200);
          res.write('{"');
          res.end('ok":1}');
        } else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":1}');
      });
    });
    let connections = 0;
    server!.on('connection', () => (connections += 1));
    const result = await runOpenLoopProcess(config(url));
    expect(result.scheduled).toBe(200);
    expect(result.sent).toBe(200);
    expect(seen[0]).toBe('POST /v1/chat?x=1 Bearer k {"model":"m"}');
    expect(result.shedMs).toHaveLength(20);
    expect(result.admittedMs).toHaveLength(180);
    // each answer carries when its request was scheduled: every 2.5 ms over the half second
    expect(result.admittedScheduledMs).toHaveLength(180);
    expect(result.shedScheduledMs).toHaveLength(20);
    const scheduled = [...result.admittedScheduledMs, ...result.shedScheduledMs].sort((a, b) => a - b);
    expect(scheduled[0]).toBe(0);
    expect(scheduled.at(-1)).toBeCloseTo(199 * 2.5, 6);
    expect(result.failures).toEqual({});
    expect(result.timedOut).toBe(0);
    // Connections are reused: every connection the pool opened stayed open for later requests (none was opened per
    // request and closed), so the pool never grew past what was in flight at the busiest moment. How many that is
    // depends on how fast this machine answers, which a shared test machine does not promise.
    expect(connections).toBe(result.maxOpen);
    expect(connections).toBeLessThan(result.sent / 4);
    expect(result.sendingSeconds).toBeGreaterThan(0.45);
    expect(result.sendingSeconds).toBeLessThan(0.7);
  });

  it('measures from the scheduled time: requests that waited for a busy pool count their wait, and late answers time out', async () => {
    const url = await listen((req, res) => {
      req.resume();
      req.on('end', () => {
        const delay = req.headers['x-slow'] === undefined ? 100 : 5000;
        setTimeout(() => res.writeHead(200).end('{"ok":1}'), delay);
      });
    });
    const result = await runOpenLoopProcess(config(url, { ratePerSec: 200, seconds: 0.5, maxConnections: 2 }));
    // Two connections each answer 10 requests a second: most of the 100 wait for one and then time out at 1 s.
    expect(result.maxOpen).toBe(2);
    expect(result.waitedForConnection).toBeGreaterThan(90);
    expect(result.admittedMs.length + result.timedOut).toBe(100);
    expect(result.timedOut).toBeGreaterThan(60);
    expect(Math.max(...result.admittedMs)).toBeGreaterThan(500);

    const slow = await runOpenLoopProcess(config(url, { headers: { 'x-slow': '1' }, ratePerSec: 20, seconds: 0.25, timeoutMs: 300 }));
    expect(slow.timedOut).toBe(5);
    expect(slow.admittedMs).toEqual([]);
  });

  it('counts statuses and failed checks by reason, and a refused connection by its code', async () => {
    const url = await listen((req, res) => {
      req.resume();
      req.on('end', () => {
        if (req.headers['x-mode'] === '429') res.writeHead(429, { connection: 'close' }).end('too many');
        else res.writeHead(200).end('{"wrong":1}');
      });
    });
    const bad = await runOpenLoopProcess(config(url, { ratePerSec: 100, seconds: 0.2 }));
    expect(bad.failures).toEqual({ '200 check': 20 });
    const limited = await runOpenLoopProcess(config(url, { headers: { 'x-mode': '429' }, ratePerSec: 100, seconds: 0.2 }));
    expect(limited.failures).toEqual({ '429': 20 });
    await new Promise<void>((done) => server!.close(() => done()));
    server = undefined;
    const refused = await runOpenLoopProcess(config(url, { ratePerSec: 100, seconds: 0.1 }));
    expect(refused.failures).toEqual({ ECONNREFUSED: 10 });
  });

  it('counts an answer that is not HTTP by its parse error and goes on sending on new connections', async () => {
    const { createServer: createTcpServer } = await import('node:net');
    const garbage = createTcpServer((socket) => {
      socket.on('data', () => socket.write('SSH-2.0-OpenSSH\r\n\r\n'));
      socket.on('error', () => {});
    });
    await new Promise<void>((done) => garbage.listen(0, '127.0.0.1', done));
    try {
      const url = `http://127.0.0.1:${(garbage.address() as AddressInfo).port}/v1/chat`;
      const result = await runOpenLoopProcess(config(url, { ratePerSec: 100, seconds: 0.2 }));
      expect(result.sent).toBe(20);
      expect(result.failures).toEqual({ Http1ParseError: 20 });
      expect(result.timedOut).toBe(0);
      expect(result.admittedMs).toEqual([]);
    } finally {
      await new Promise<void>((done) => garbage.close(() => done()));
    }
  });

  it('writes Host and Content-Length itself and keeps the caller from doubling them', () => {
    const bytes = encodeRequest(new URL('http://127.0.0.1:9/p'), { Host: 'evil', 'content-length': '1', x: 'y' }, 'é');
    expect(bytes.toString('utf8')).toBe('POST /p HTTP/1.1\r\nhost: 127.0.0.1:9\r\ncontent-length: 2\r\nx: y\r\n\r\né');
  });
});
