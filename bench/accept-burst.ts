/**
 * How a Node process accepts a burst of new connections while its event loop is busy: how many it takes per turn
 * of the loop, and how long until it has taken them all. Run on each Node to compare them (it imports nothing of
 * the gateway, so any Node runs it):
 *
 *   node dist/bench/accept-burst.js [connections=512] [busy ms per turn=20] [listening sockets=1]
 *
 * More than one listening socket: that many bound to the port with SO_REUSEPORT (Linux), as the gateway's API listener
 * does (ACCEPT_SOCKETS), all handing their connections to one handler.
 *
 * A child process opens the connections all at once; the server's loop spends `busy` ms of synchronous work in each
 * turn, as a saturated gateway does. Printed: the turns that accepted any, the most in one turn, the median per
 * accepting turn, and the time from the first to the last accept.
 */
import { fork } from 'node:child_process';
import { connect, createServer, type Socket } from 'node:net';

const CHILD = 'accept-burst-child';

if (process.argv[2] === CHILD) {
  const port = Number(process.argv[3]);
  const count = Number(process.argv[4]);
  const sockets: Socket[] = [];
  for (let index = 0; index < count; index += 1) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    sockets.push(socket);
  }
  process.on('message', () => {
    for (const socket of sockets) socket.destroy();
    process.exit(0);
  });
} else {
  const count = Number(process.argv[2] ?? 512);
  const busyMs = Number(process.argv[3] ?? 20);
  const listeners = Math.max(1, Number(process.argv[4] ?? 1));
  const perTurn: number[] = [];
  let thisTurn = 0;
  let accepted = 0;
  let first = 0;
  let last = 0;
  const held: Socket[] = [];
  const server = createServer((socket) => {
    held.push(socket);
    socket.on('error', () => {});
    if (accepted === 0) first = performance.now();
    accepted += 1;
    thisTurn += 1;
    last = performance.now();
  });
  const extra: Array<ReturnType<typeof createServer>> = [];
  server.listen({ port: 0, host: '127.0.0.1', backlog: count * 2, reusePort: listeners > 1 }, async () => {
    const port = (server.address() as { port: number }).port;
    for (let index = 1; index < listeners; index++) {
      const acceptor = createServer((socket) => server.emit('connection', socket));
      await new Promise<void>((done) => acceptor.listen({ port, host: '127.0.0.1', backlog: count * 2, reusePort: true }, done));
      extra.push(acceptor);
    }
    const child = fork(new URL(import.meta.url).pathname, [CHILD, String(port), String(count)], { stdio: 'inherit' });
    const deadline = performance.now() + 30_000;
    const turn = (): void => {
      if (thisTurn > 0) perTurn.push(thisTurn);
      thisTurn = 0;
      if (accepted >= count || performance.now() > deadline) {
        child.send('done');
        for (const socket of held) socket.destroy();
        server.close();
        for (const acceptor of extra) acceptor.close();
        const sorted = [...perTurn].sort((a, b) => a - b);
        const median = sorted[Math.floor(sorted.length / 2)] ?? 0;
        console.log(JSON.stringify({
          node: process.version,
          connections: count,
          busy_ms_per_turn: busyMs,
          listening_sockets: listeners,
          accepted,
          accepting_turns: perTurn.length,
          max_per_turn: sorted.at(-1) ?? 0,
          median_per_turn: median,
          first_to_last_ms: Math.round(last - first),
        }));
        return;
      }
      // Synchronous work of one turn, as a saturated gateway's loop does.
      const until = performance.now() + busyMs;
      while (performance.now() < until) {
        // busy
      }
      setImmediate(turn);
    };
    setImmediate(turn);
  });
}
