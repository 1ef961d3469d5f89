import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpTransport } from '../../../src/upstreams/http-transport.js';
import { UpstreamConnectionError } from '../../../src/upstreams/upstream-exchange.js';
import { readWholeBody } from '../../../src/relay/upstream-call.js';

const TIMEOUTS = { firstByteMs: 5_000, idleMs: 5_000 };

/** An upstream answering GET /<bytes> with that many bytes in 16 KiB writes; counts its connections. */
async function upstream(): Promise<{ server: Server; base: string; connections: () => number; closed: () => number }> {
  let connections = 0;
  let closed = 0;
  const server = createServer((request, response) => {
    const size = Number(request.url?.slice(1) ?? '0');
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) });
    const piece = Buffer.alloc(16 * 1024, 0x61);
    let sent = 0;
    const more = (): void => {
      while (sent < size) {
        const part = piece.subarray(0, Math.min(piece.length, size - sent));
        sent += part.length;
        if (!response.write(part)) return void response.once('drain', more);
      }
      response.end();
    };
    more();
  });
  server.on('connection', (socket: Socket) => {
    connections += 1;
    socket.on('close', () => {
      closed += 1;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections, closed: () => closed };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** An upstream writing `chunks` pieces of 1 KiB `gapMs` apart, then falling silent with the answer open; counts closed connections. */
async function tricklingUpstream(chunks: number, gapMs: number): Promise<{ server: Server; base: string; closed: () => number }> {
  let closed = 0;
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    let written = 0;
    const write = (): void => {
      response.write(Buffer.alloc(1024, 0x62));
      written += 1;
      if (written < chunks) setTimeout(write, gapMs);
    };
    write();
  });
  server.on('connection', (socket: Socket) => {
    socket.on('close', () => {
      closed += 1;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, closed: () => closed };
}

describe('HttpTransport', () => {
  let server: Server | undefined;
  const transport = new HttpTransport();
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  it('hands over a body larger than its buffer intact, read slowly (backpressure)', async () => {
    const up = await upstream();
    server = up.server;
    const response = await transport.send({ url: `${up.base}/3000000`, method: 'GET', headers: {}, body: null }, { signal: new AbortController().signal, timeouts: TIMEOUTS });
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('application/octet-stream');
    let total = 0;
    for await (const chunk of response.body) {
      expect(chunk.every((byte) => byte === 0x61)).toBe(true);
      total += chunk.length;
      if (total < 200_000) await sleep(5);
    }
    expect(total).toBe(3_000_000);
  });

  it('reads out a small rest after an early stop and reuses the connection; a large rest closes it', async () => {
    const up = await upstream();
    server = up.server;
    const readOne = async (size: number): Promise<void> => {
      const response = await transport.send({ url: `${up.base}/${size}`, method: 'GET', headers: {}, body: null }, { signal: new AbortController().signal, timeouts: TIMEOUTS });
      for await (const chunk of response.body) if (chunk.length > 0) break;
    };
    await readOne(100_000);
    await sleep(50);
    await readOne(100_000);
    await sleep(50);
    expect(up.connections()).toBe(1);
    expect(up.closed()).toBe(0);
    await readOne(5_000_000);
    for (let waited = 0; up.closed() === 0 && waited < 2_000; waited += 20) await sleep(20);
    expect(up.closed()).toBeGreaterThanOrEqual(1);
  });

  it('reports the caller leaving mid-body as an aborted exchange', async () => {
    const up = await upstream();
    server = up.server;
    const caller = new AbortController();
    const response = await transport.send({ url: `${up.base}/5000000`, method: 'GET', headers: {}, body: null }, { signal: caller.signal, timeouts: TIMEOUTS });
    const reading = (async () => {
      for await (const chunk of response.body) {
        if (chunk.length > 0) await sleep(10);
      }
    })();
    caller.abort(new Error('client disconnected'));
    const error = await reading.then(() => null, (thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect((error as UpstreamConnectionError).kind).toBe('aborted');
  });

  it('reads a whole body larger than its buffer as one promise', async () => {
    const up = await upstream();
    server = up.server;
    const response = await transport.send({ url: `${up.base}/3000000`, method: 'GET', headers: {}, body: null }, { signal: new AbortController().signal, timeouts: TIMEOUTS });
    expect(typeof response.body.whole).toBe('function');
    await sleep(50);
    const body = await readWholeBody(response.body);
    expect(body.length).toBe(3_000_000);
    expect(body.every((byte) => byte === 0x61)).toBe(true);
  });

  it('times a whole-body read out when the upstream falls silent between two chunks, each chunk restarting the idle clock', async () => {
    const up = await tricklingUpstream(6, 100);
    server = up.server;
    const response = await transport.send({ url: `${up.base}/`, method: 'GET', headers: {}, body: null }, { signal: new AbortController().signal, timeouts: { firstByteMs: 5_000, idleMs: 300 } });
    const started = performance.now();
    const error = await readWholeBody(response.body).then(() => null, (thrown: unknown) => thrown);
    const waited = performance.now() - started;
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect((error as UpstreamConnectionError).kind).toBe('idle-timeout');
    // Six chunks 100 ms apart span 500 ms, longer than the idle timeout: only the silence after the last one counts.
    expect(waited).toBeGreaterThanOrEqual(700);
    for (let wait = 0; up.closed() === 0 && wait < 2_000; wait += 20) await sleep(20);
    expect(up.closed()).toBe(1);
  });

  it('destroys the connection when the caller leaves during a whole-body read', async () => {
    const up = await tricklingUpstream(1, 0);
    server = up.server;
    const caller = new AbortController();
    const response = await transport.send({ url: `${up.base}/`, method: 'GET', headers: {}, body: null }, { signal: caller.signal, timeouts: TIMEOUTS });
    const reading = readWholeBody(response.body).then(() => null, (thrown: unknown) => thrown);
    await sleep(50);
    expect(up.closed()).toBe(0);
    caller.abort(new Error('client disconnected'));
    const error = await reading;
    expect(error).toBeInstanceOf(UpstreamConnectionError);
    expect((error as UpstreamConnectionError).kind).toBe('aborted');
    for (let wait = 0; up.closed() === 0 && wait < 2_000; wait += 20) await sleep(20);
    expect(up.closed()).toBe(1);
  });
});
