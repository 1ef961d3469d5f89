import cluster from 'node:cluster';
import type { Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';

/**
 * Where an HTTP server listens, and how many listening sockets accept its connections.
 *
 * Node's libuv accepts one connection per listening socket and turn of the event loop, so a process whose turns are
 * long (a burst of requests being admitted) takes a burst of new connections one turn at a time: 1,000 streams opened
 * at once waited for 1,000 turns. With `sockets` above one, that many sockets listen on the same address and port
 * (SO_REUSEPORT: the kernel spreads new connections over them), each accepts in every turn, and each hands its
 * connections to the one HTTP server, so they are served, limited and drained as any other.
 *
 * The faster intake is for bursts, not for sustained overload: while `holdIntake()` says the process is shedding, the
 * extra sockets' new connections are held unread (accepted, not yet handed to the HTTP server), and one is handed over
 * only in a turn of the loop in which the main socket took none, so the process takes at most one new connection per
 * turn in all, as with one socket, and the excess waits, out of its sight, as it does in the kernel's accept queue with
 * one socket. Holding is the only way to keep them out: a listening socket cannot stop accepting in Node (its handle
 * cannot stop reading) and closing one resets the connections in its queue (Linux migrates them to the other sockets
 * only with `net.ipv4.tcp_migrate_req` on). Once the process stops shedding, the held connections are handed over as
 * fast as the extra sockets accept (one each per turn), not all in one turn, which would admit a burst of the very
 * load that was just shed. At most `backlog` connections are held; beyond that they are handed over as they come.
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

export interface ListenOptions {
  host: string;
  port: number;
  backlog: number;
  sockets: number;
  /** True while the process sheds: the process then takes at most one new connection per turn, whichever socket accepted it. */
  holdIntake?: () => boolean;
}

export async function listenOn(server: Server, options: ListenOptions): Promise<Listening> {
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
  const intake = new PacedIntake(server, options.holdIntake ?? (() => false), { maxHeld: backlog, perTurn: sockets - 1 });
  try {
    for (let index = 1; index < sockets; index++) {
      const acceptor = createNetServer({ pauseOnConnect: true }, (socket) => intake.arrived(socket));
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
      intake.close();
    },
  };
}

/**
 * Hands the extra sockets' connections to the HTTP server: as they come, or (once any is held) `perTurn` per turn; while
 * the intake is held, one per turn in all, counting the main socket's: a held connection is handed over only in a turn
 * in which the main socket (which accepts one per turn whatever is held) took none.
 */
class PacedIntake {
  readonly #server: Server;
  readonly #hold: () => boolean;
  readonly #maxHeld: number;
  readonly #perTurn: number;
  readonly #held: Socket[] = [];
  #releasing: NodeJS.Immediate | null = null;
  /** The main socket handed the HTTP server a connection since the last release turn. */
  #mainTookOne = false;
  #handingOver = false;

  constructor(server: Server, hold: () => boolean, bounds: { maxHeld: number; perTurn: number }) {
    this.#server = server;
    this.#hold = hold;
    this.#maxHeld = bounds.maxHeld;
    this.#perTurn = Math.max(1, bounds.perTurn);
    server.on('connection', () => {
      if (!this.#handingOver) this.#mainTookOne = true;
    });
  }

  /** A connection accepted by an extra socket (paused: nothing of it is read until it is handed over). */
  arrived(socket: Socket): void {
    if (this.#held.length === 0 && !this.#hold()) {
      this.#handOver(socket);
      return;
    }
    if (this.#held.length >= this.#maxHeld) {
      this.#handOver(socket);
      return;
    }
    // A reset while held must not go unhandled; the HTTP server's own handler takes over with the connection.
    socket.on('error', ignoreHeldError);
    this.#held.push(socket);
    this.#releaseNextTurn();
  }

  /** Hands every held connection over (the listener is stopping: they are served or drained as any other). */
  close(): void {
    if (this.#releasing !== null) clearImmediate(this.#releasing);
    this.#releasing = null;
    for (const socket of this.#held.splice(0)) this.#handOver(socket);
  }

  #releaseNextTurn(): void {
    if (this.#releasing !== null) return;
    this.#releasing = setImmediate(() => {
      this.#releasing = null;
      const mainTookOne = this.#mainTookOne;
      this.#mainTookOne = false;
      const count = this.#hold() ? (mainTookOne ? 0 : 1) : this.#perTurn;
      for (const socket of this.#held.splice(0, count)) this.#handOver(socket);
      if (this.#held.length > 0) this.#releaseNextTurn();
    });
  }

  #handOver(socket: Socket): void {
    socket.off('error', ignoreHeldError);
    if (socket.destroyed) return;
    this.#handingOver = true;
    try {
      this.#server.emit('connection', socket);
    } finally {
      this.#handingOver = false;
    }
    socket.resume();
  }
}

function ignoreHeldError(): void {}

function listenOnce(server: NetServer, options: { port: number; host: string; backlog: number; reusePort?: boolean }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
