/**
 * A Redis server of the test's own (Debian's redis-server on its own port, nothing persisted), so a test may kill
 * and restart it without touching the machine's shared Redis.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection } from 'node:net';
import { ensureDebianPackage } from './debian-package.js';

const REDIS_SERVER = '/usr/bin/redis-server';

export interface PrivateRedisServer {
  port: number;
  url: string;
  /** Starts the server (again) on its port and waits until it accepts connections. */
  start(): Promise<void>;
  /** SIGKILL: the server is gone at once, as in a crash or a lost network. */
  kill(): Promise<void>;
  /** Ends it for good; safe to call more than once. */
  destroy(): Promise<void>;
}

/** True when redis-server is installed (after installing Debian's redis-server when it was not and we may). */
export function redisServerAvailable(): boolean {
  return ensureDebianPackage(REDIS_SERVER, 'redis-server', 'private redis');
}

export async function startPrivateRedisServer(port: number): Promise<PrivateRedisServer> {
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  const server: PrivateRedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      if (child !== null) return;
      const started = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--protected-mode', 'no'], { stdio: 'ignore' });
      child = started;
      exited = new Promise((resolve) => started.once('exit', () => resolve()));
      await waitForPort(port, 10_000);
    },
    async kill() {
      const running = child;
      if (running === null) return;
      child = null;
      running.kill('SIGKILL');
      await exited;
    },
    destroy: () => server.kill(),
  };
  await server.start();
  return server;
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = createConnection({ host: '127.0.0.1', port }, () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`redis-server did not listen on ${port} within ${timeoutMs} ms`);
}
