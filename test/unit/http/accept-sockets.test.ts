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

/**
 * Counts the connections `server` takes from now on; `inBusyTurns` then runs a loop whose turns are kept 5 ms busy
 * on purpose until `done` (given the connections taken so far and the turns) or a deadline, and says the connections
 * taken and the most taken in one of its turns.
 */
function countConnections(server: Server): { inBusyTurns: (done: (taken: number, turns: number) => boolean) => Promise<{ accepted: number; most: number }> } {
  let thisTurn = 0;
  server.on('connection', () => {
    thisTurn += 1;
  });
  return {
    inBusyTurns: async (done) => {
      const deadline = performance.now() + 20_000;
      let accepted = 0;
      let most = 0;
      for (let turns = 0; !done(accepted + thisTurn, turns) && performance.now() < deadline; turns++) {
        const busyUntil = performance.now() + 5;
        while (performance.now() < busyUntil) {
          // a busy turn
        }
        await new Promise((resolve) => setImmediate(resolve));
        most = Math.max(most, thisTurn);
        accepted += thisTurn;
        thisTurn = 0;
      }
      return { accepted: accepted + thisTurn, most };
    },
  };
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
    const server = createServer(() => undefined);
    const counted = countConnections(server);
    const listening = await listenOn(server, { host: '127.0.0.1', port: 0, backlog: 256, sockets: 8 });
    servers.push({ server, listening });
    const sockets = await Promise.all(Array.from({ length: 64 }, () => connected(listening.address.port)));
    // The connections are established in the kernel; the loop takes them in turns kept long on purpose.
    const { accepted, most } = await counted.inBusyTurns((taken) => taken >= 64);
    for (const socket of sockets) socket.destroy();
    expect(accepted).toBe(64);
    expect(most).toBeGreaterThan(1);
  });

  it.runIf(linux)('while the intake is held, takes about one new connection per turn in all, and serves every held one once it is released', async () => {
    let hold = true;
    const server = createServer((_request, response) => response.end('ok'));
    let handedOver = 0;
    server.on('connection', () => {
      handedOver += 1;
    });
    const counted = countConnections(server);
    const listening = await listenOn(server, { host: '127.0.0.1', port: 0, backlog: 256, sockets: 8, holdIntake: () => hold });
    servers.push({ server, listening });
    const sockets = await Promise.all(Array.from({ length: 64 }, () => connected(listening.address.port)));
    // Each client has sent its request before it is taken: a held connection's request waits unread, not lost.
    const answers = sockets.map((socket) => new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
      socket.on('end', () => resolve(text));
      socket.on('error', (error) => resolve(`error ${error.message}`));
      socket.write('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n');
    }));
    // Held: a held connection is handed over only in a turn in which the main socket took none, so twelve turns take
    // about twelve connections in all, as one socket would (a turn's count may hold the previous turn's hand-over).
    const turns = 12;
    const { accepted, most } = await counted.inBusyTurns((_taken, turn) => turn >= turns);
    expect(most).toBeLessThanOrEqual(2);
    expect(accepted).toBeLessThanOrEqual(turns + 1);
    // Released: every held connection is handed over (the extra sockets' seven per turn), and each is served.
    hold = false;
    const deadline = performance.now() + 20_000;
    while (handedOver < 64 && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(handedOver).toBe(64);
    for (const answer of await Promise.all(answers)) expect(answer).toMatch(/^HTTP\/1\.1 200 [\s\S]*ok$/);
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
