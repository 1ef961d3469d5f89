import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Channel } from '../../../src/domain/records.js';
import { connectionLimitsByOrigin } from '../../../src/upstreams/connection-limits.js';
import { HttpTransport } from '../../../src/upstreams/http-transport.js';
import type { UpstreamResponse } from '../../../src/upstreams/upstream-adapter.js';

const TIMEOUTS = { firstByteMs: 30_000, idleMs: 30_000 };
const STREAMS = 1000;

/** An upstream that opens every stream at once (head and a first event) and ends them all only when told to. */
async function slowStreamingUpstream(): Promise<{ server: Server; origin: string; open: () => number; connections: () => number; finish: () => void }> {
  const held: ServerResponse[] = [];
  let connections = 0;
  let finished = false;
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write('data: {"first":true}\n\n');
    if (finished) response.end('data: [DONE]\n\n');
    else held.push(response);
  });
  server.maxConnections = STREAMS * 2;
  server.on('connection', (socket: Socket) => {
    connections += 1;
    socket.on('close', () => {
      connections -= 1;
    });
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: STREAMS * 2 }, resolve));
  return {
    server,
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open: () => held.length,
    connections: () => connections,
    finish: () => {
      finished = true;
      for (const response of held.splice(0)) response.end('data: [DONE]\n\n');
    },
  };
}

async function readAll(response: UpstreamResponse): Promise<string> {
  let text = '';
  for await (const chunk of response.body) text += chunk.toString('utf8');
  return text;
}

function channel(baseUrl: string | null, settings: Record<string, unknown>): Channel {
  return { baseUrl, settings } as unknown as Channel;
}

describe('upstream connections', () => {
  let server: Server | undefined;
  let transport: HttpTransport | undefined;
  afterEach(async () => {
    await transport?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
    server = undefined;
    transport = undefined;
  });

  it(`opens ${STREAMS} slow concurrent streams to one origin at once: no hidden per-origin ceiling`, async () => {
    const upstream = await slowStreamingUpstream();
    server = upstream.server;
    transport = new HttpTransport();
    const startedAt = performance.now();
    const heads = await Promise.all(Array.from({ length: STREAMS }, () => transport!.send(
      { url: `${upstream.origin}/v1/chat/completions`, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"stream":true}' },
      { signal: new AbortController().signal, timeouts: TIMEOUTS },
    )));
    // Every stream has its head while none has ended: each holds its own connection.
    expect(heads.every((head) => head.status === 200)).toBe(true);
    expect(upstream.open()).toBe(STREAMS);
    expect(upstream.connections()).toBe(STREAMS);
    expect(performance.now() - startedAt).toBeLessThan(25_000);
    upstream.finish();
    const bodies = await Promise.all(heads.map(readAll));
    expect(bodies.every((body) => body.endsWith('data: [DONE]\n\n'))).toBe(true);
  }, 40_000);

  it("keeps to a channel's settings.max_connections for its origin, and lifts it when the setting goes", async () => {
    const upstream = await slowStreamingUpstream();
    server = upstream.server;
    transport = new HttpTransport();
    transport.setOriginLimits(connectionLimitsByOrigin([channel(`${upstream.origin}/v1`, { max_connections: 5 })]));
    const send = (): Promise<UpstreamResponse> => transport!.send(
      { url: `${upstream.origin}/v1/chat/completions`, method: 'POST', headers: {}, body: '{}' },
      { signal: new AbortController().signal, timeouts: TIMEOUTS },
    );
    const first = await Promise.all(Array.from({ length: 5 }, send));
    const waiting = send();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(upstream.open()).toBe(5);
    expect(upstream.connections()).toBe(5);
    // Without the setting, the origin gets the default: the waiting request is not held back by new ones.
    transport.setOriginLimits(connectionLimitsByOrigin([channel(`${upstream.origin}/v1`, {})]));
    const more = await Promise.all(Array.from({ length: 10 }, send));
    expect(upstream.open()).toBe(15);
    upstream.finish();
    await Promise.all([...first, ...more].map(readAll));
    await readAll(await waiting);
  }, 20_000);

  it('reads limits per origin from the channels: the larger of two on one origin, none without a base URL or a valid number', () => {
    const limits = connectionLimitsByOrigin([
      channel('https://api.example.com/v1', { max_connections: 50 }),
      channel('https://api.example.com/other', { max_connections: 80 }),
      channel('https://slow.example.com:8443/v1', { max_connections: 3 }),
      channel(null, { max_connections: 10 }),
      channel('https://bad.example.com', { max_connections: 0 }),
      channel('https://bad2.example.com', { max_connections: '7' }),
      channel('https://plain.example.com', {}),
    ]);
    expect(Object.fromEntries(limits)).toEqual({ 'https://api.example.com': 80, 'https://slow.example.com:8443': 3 });
  });
});
