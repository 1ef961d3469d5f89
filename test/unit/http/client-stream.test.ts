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
});
