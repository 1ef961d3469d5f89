import { createServer, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { listenOn, type Listening } from '../../../src/http/accept-sockets.js';

const linux = process.platform === 'linux';

/** Opens a connection and resolves once it is established (or rejects with its error). */
function connected(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('listenOn', () => {
  const servers: Array<{ server: Server; listening: Listening | null }> = [];
  afterEach(async () => {
    for (const { server, listening } of servers.splice(0)) {
      listening?.closeExtra();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('serves the connections of every listening socket through the one HTTP server', async () => {
    const server = createServer((_request, response) => response.end('ok'));
    const listening = await listenOn(server, { host: '127.0.0.1', port: 0, backlog: 64, sockets: 4 });
    servers.push({ server, listening });
    const port = listening.address.port;
    const seen = new Set<string>();
    // New connections go to any of the sockets: every one is answered by the server, whichever accepted it.
    const answers = await Promise.all(Array.from({ length: 40 }, async () => {
      const response = await fetch(`http://127.0.0.1:${port}/`, { headers: { connection: 'close' } });
      return response.text();
    }));
    for (const answer of answers) seen.add(answer);
    expect([...seen]).toEqual(['ok']);
  });

  it.runIf(linux)('accepts more than one connection per turn of a busy loop', async () => {
    let thisTurn = 0;
    let most = 0;
    const server = createServer(() => undefined);
    server.on('connection', () => {
      thisTurn += 1;
    });
    const listening = await listenOn(server, { host: '127.0.0.1', port: 0, backlog: 256, sockets: 8 });
    servers.push({ server, listening });
    const sockets = await Promise.all(Array.from({ length: 64 }, () => connected(listening.address.port)));
    // The connections are established in the kernel; the loop takes them in turns kept long on purpose.
    const deadline = performance.now() + 20_000;
    let accepted = 0;
    while (accepted < 64 && performance.now() < deadline) {
      const busyUntil = performance.now() + 5;
      while (performance.now() < busyUntil) {
        // a busy turn
      }
      await new Promise((resolve) => setImmediate(resolve));
      most = Math.max(most, thisTurn);
      accepted += thisTurn;
      thisTurn = 0;
    }
    for (const socket of sockets) socket.destroy();
    expect(accepted).toBe(64);
    expect(most).toBeGreaterThan(1);
  });

  it.runIf(linux)('refuses a port already listened on, as one socket would', async () => {
    const first = createServer(() => undefined);
    const listening = await listenOn(first, { host: '127.0.0.1', port: 0, backlog: 64, sockets: 4 });
    servers.push({ server: first, listening });
    const second = createServer(() => undefined);
    await expect(listenOn(second, { host: '127.0.0.1', port: listening.address.port, backlog: 64, sockets: 4 })).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(second.listening).toBe(false);
  });

  it.runIf(linux)('stops accepting on every socket once closed', async () => {
    const server = createServer(() => undefined);
    const listening = await listenOn(server, { host: '127.0.0.1', port: 0, backlog: 64, sockets: 4 });
    const port = listening.address.port;
    listening.closeExtra();
    await new Promise((resolve) => server.close(resolve));
    const attempts = await Promise.allSettled(Array.from({ length: 16 }, () => connected(port)));
    for (const attempt of attempts) {
      if (attempt.status === 'fulfilled') attempt.value.destroy();
      expect(attempt.status).toBe('rejected');
    }
  });
});
