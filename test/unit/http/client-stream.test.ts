import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ClientStream } from '../../../src/http/client-stream.js';

/** Serves one streamed answer written by `handle`, and counts the system-call writes of the answer's socket. */
async function serve(handle: (stream: ClientStream, response: ServerResponse) => Promise<void>): Promise<{ server: Server; url: string; writes: () => number }> {
  let writes = 0;
  const server = createServer((_request, response) => {
    const socket = response.socket as Socket & { _writeGeneric: (...args: unknown[]) => unknown };
    const original = socket._writeGeneric.bind(socket);
    socket._writeGeneric = (...args: unknown[]) => {
      writes += 1;
      return original(...args);
    };
    void handle(new ClientStream(response, { 'content-type': 'text/event-stream' }, new AbortController().signal, () => {}), response);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, writes: () => writes };
}

describe('ClientStream', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
  });

  it('sends the parts and the end of one event-loop turn in one write', async () => {
    const served = await serve(async (stream) => {
      await stream.write('data: 1\n\n');
      await stream.write(Buffer.from('data: 2\n\n'));
      stream.end('data: [DONE]\n\n');
    });
    server = served.server;
    const response = await fetch(served.url);
    expect(await response.text()).toBe('data: 1\n\ndata: 2\n\ndata: [DONE]\n\n');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(served.writes()).toBe(1);
  });

  it('sends what was written before a pause without waiting for the end', async () => {
    let release = (): void => {};
    const paused = new Promise<void>((resolve) => {
      release = resolve;
    });
    const served = await serve(async (stream) => {
      await stream.write('data: early\n\n');
      await paused;
      stream.end();
    });
    server = served.server;
    const response = await fetch(served.url);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: early\n\n');
    release();
    while (!(await reader.read()).done) {
      // the end
    }
    expect(served.writes()).toBe(2);
  });

  it('gathers the writes of one turn, strings and buffers alike, into one chunk that leaves in order at the turn\'s end', async () => {
    let release = (): void => {};
    const paused = new Promise<void>((resolve) => {
      release = resolve;
    });
    let writesAfterTurn = -1;
    const served = await serve(async (stream) => {
      await stream.write('data: 1\n\n');
      await stream.write(Buffer.from('data: 2\n\n'));
      await stream.write('data: 3\n\n');
      // Nothing has left within the turn; all of it has by the next.
      const inTurn = served.writes();
      await new Promise((resolve) => setImmediate(resolve));
      writesAfterTurn = served.writes() - inTurn;
      await paused;
      stream.end();
    });
    server = served.server;
    const response = await fetch(served.url);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    // The turn's writes arrive while the stream is still open (no end, no timer in between).
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: 1\n\ndata: 2\n\ndata: 3\n\n');
    expect(writesAfterTurn).toBe(1);
    release();
    while (!(await reader.read()).done) {
      // the end
    }
  });

  it('sends each turn\'s writes in that turn, in order', async () => {
    const received: string[] = [];
    let sent = 0;
    const served = await serve(async (stream) => {
      for (let turn = 0; turn < 5; turn++) {
        await stream.write(`data: ${turn}a\n\n`);
        await stream.write(`data: ${turn}b\n\n`);
        sent += 1;
        // The caller has this turn's events before the next turn writes (polled: a loaded machine may be slow).
        const deadline = Date.now() + 10_000;
        while (received.join('').split('b\n\n').length - 1 < sent && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
      }
      stream.end('data: [DONE]\n\n');
    });
    server = served.server;
    const response = await fetch(served.url);
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received.push(decoder.decode(value, { stream: true }));
    }
    expect(received.join('')).toBe('data: 0a\n\ndata: 0b\n\ndata: 1a\n\ndata: 1b\n\ndata: 2a\n\ndata: 2b\n\ndata: 3a\n\ndata: 3b\n\ndata: 4a\n\ndata: 4b\n\ndata: [DONE]\n\n');
    expect(sent).toBe(5);
  });

  it('sends a turn\'s writes at once when they reach the high-water mark, and waits for a caller that does not read', async () => {
    let leftInTurn = -1;
    let mark = 0;
    let writesDone = 0;
    const served = await serve(async (stream, response) => {
      mark = response.writableHighWaterMark;
      const piece = Buffer.alloc(mark, 0x61);
      await stream.write(piece);
      leftInTurn = served.writes();
      // A caller that reads nothing: the writes stop once its socket is full instead of piling up.
      for (let index = 0; index < 4096; index++) {
        await stream.write(piece);
        writesDone += 1;
      }
      stream.end();
    });
    server = served.server;
    const controller = new AbortController();
    const response = await fetch(served.url, { signal: controller.signal });
    const deadline = Date.now() + 10_000;
    while (leftInTurn < 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(leftInTurn).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(writesDone).toBeLessThan(4096);
    controller.abort();
    await response.body?.cancel().catch(() => undefined);
    expect(mark).toBeGreaterThan(0);
  });
});
