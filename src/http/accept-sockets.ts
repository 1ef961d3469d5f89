import cluster from 'node:cluster';
import type { Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';

/**
 * Where an HTTP server listens, and how many listening sockets accept its connections.
 *
 * Node's libuv accepts one connection per listening socket and turn of the event loop, so a process whose turns are
 * long (a burst of requests being admitted) takes a burst of new connections one turn at a time: 1,000 streams opened
 * at once waited for 1,000 turns. With `sockets` above one, that many sockets listen on the same address and port
 * (SO_REUSEPORT: the kernel spreads new connections over them), each accepts in every turn, and each hands its
 * connections to the one HTTP server, so they are served, limited and drained as any other.
 *
 * SO_REUSEPORT exists on Linux only here (elsewhere, and in a cluster worker, whose listening socket is the primary's,
 * one socket listens). It would let a second process of the same user listen on the port too and take part of its
 * connections: the address is first bound alone, so a port already in use fails as it would with one socket.
 */
export interface Listening {
  address: AddressInfo;
  /** Stops the extra sockets' accepting (the HTTP server's own is closed by whoever stops it). */
  closeExtra(): void;
}

export async function listenOn(server: Server, options: { host: string; port: number; backlog: number; sockets: number }): Promise<Listening> {
  const { host, backlog } = options;
  const sockets = process.platform === 'linux' && !cluster.isWorker ? Math.max(1, options.sockets) : 1;
  if (sockets === 1) {
    await listenOnce(server, { port: options.port, host, backlog });
    return { address: server.address() as AddressInfo, closeExtra: () => {} };
  }
  // Alone first: a port in use (by anything, with SO_REUSEPORT or without) fails here; port 0 picks the port.
  const probe = createNetServer();
  await listenOnce(probe, { port: options.port, host, backlog: 1 });
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  await listenOnce(server, { port, host, backlog, reusePort: true });
  const extra: NetServer[] = [];
  try {
    for (let index = 1; index < sockets; index++) {
      const acceptor = createNetServer({ pauseOnConnect: false }, (socket) => server.emit('connection', socket));
      await listenOnce(acceptor, { port, host, backlog, reusePort: true });
      extra.push(acceptor);
    }
  } catch (error) {
    for (const acceptor of extra) acceptor.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    throw error;
  }
  return {
    address: server.address() as AddressInfo,
    closeExtra: () => {
      for (const acceptor of extra) acceptor.close();
    },
  };
}

function listenOnce(server: NetServer, options: { port: number; host: string; backlog: number; reusePort?: boolean }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
