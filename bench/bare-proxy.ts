/**
 * The benchmark's yardstick: the least a Node proxy does. node:http in, one undici Pool out to one upstream
 * origin, the request's method, path, headers and body passed on, the answer streamed back; nothing else (no
 * auth, no parsing, no limits, no billing). Every gateway figure is also reported as a ratio to this one,
 * measured in the same run on the same machine.
 *
 *   node dist/bench/bare-proxy.js --upstream http://127.0.0.1:PORT [--port 0] [--exit-on-stdin-close]
 *
 * Prints `LISTENING <origin>` once ready.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { Pool } from 'undici';

/** Request headers that belong to one hop (and `host`, which the pool sets for the upstream). */
const HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host']);

function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name in headers) {
    const value = headers[name];
    if (value !== undefined && !HOP_HEADERS.has(name)) out[name] = value;
  }
  return out;
}

export async function startBareProxy(upstream: string, port = 0): Promise<{ url: string; close: () => Promise<void> }> {
  // No per-origin ceiling: as many upstream connections as requests in flight, like the gateway's default.
  const pool = new Pool(new URL(upstream).origin, { connections: null, pipelining: 1, keepAliveTimeout: 30_000 });
  const server = createServer((request, response) => {
    const hasBody = request.method !== 'GET' && request.method !== 'HEAD';
    pool.request({
      method: request.method as 'POST',
      path: request.url ?? '/',
      headers: forwardedHeaders(request.headers),
      body: hasBody ? request : null,
      headersTimeout: 0,
      bodyTimeout: 0,
    }).then(({ statusCode, headers, body }) => {
      const head: Record<string, string | string[]> = {};
      for (const name in headers) {
        const value = headers[name];
        if (value !== undefined && name !== 'connection' && name !== 'keep-alive' && name !== 'transfer-encoding') head[name] = value;
      }
      response.writeHead(statusCode, head);
      body.on('error', () => response.destroy());
      body.pipe(response);
    }, () => {
      if (response.headersSent) response.destroy();
      else response.writeHead(502, { 'content-type': 'text/plain' }).end('upstream failed');
    });
    response.once('close', () => {
      if (!response.writableFinished) request.destroy();
    });
  });
  return listenOnLoopback(server, pool, port);
}

/**
 * The yardsticks' listener on 127.0.0.1 (the bench's keep-alive and backlog); `close` ends its connections, then the
 * pool's, then runs `afterClose`.
 */
export async function listenOnLoopback(server: Server, pool: Pool, port: number, afterClose?: () => void): Promise<{ url: string; close: () => Promise<void> }> {
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((done) => server.listen({ port, host: '127.0.0.1', backlog: 4096 }, done));
  const address = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      await pool.close();
      afterClose?.();
    },
  };
}

export function argument(name: string): string | undefined {
  const at = process.argv.indexOf(name);
  return at < 0 ? undefined : process.argv[at + 1];
}

/** Prints `LISTENING <origin>`, then runs until SIGTERM or SIGINT (or standard input closes, with --exit-on-stdin-close). */
export function serveUntilStopped(proxy: { url: string; close: () => Promise<void> }): void {
  console.log(`LISTENING ${proxy.url}`);
  let stopping = false;
  const stop = (): void => {
    if (!stopping) void proxy.close().finally(() => process.exit(0));
    stopping = true;
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  if (process.argv.includes('--exit-on-stdin-close')) {
    process.stdin.resume();
    process.stdin.once('end', stop);
  }
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const upstream = argument('--upstream');
  if (upstream === undefined) {
    console.error('usage: bare-proxy --upstream <origin> [--port N] [--exit-on-stdin-close]');
    process.exit(2);
  }
  serveUntilStopped(await startBareProxy(upstream, Number(argument('--port') ?? '0')));
}
