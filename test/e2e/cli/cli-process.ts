/** Runs the real `unigate` command (bin/unigate.js → dist/) as a child process, the way an operator does. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, readlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';

export const REPO_ROOT = path.resolve(import.meta.dirname, '../../..');
export const BIN = path.join(REPO_ROOT, 'bin', 'unigate.js');

/** The CLI runs the compiled output; `npm test` builds it first (locally: npx tsc -p tsconfig.build.json). */
export function assertBuilt(): void {
  const cli = path.join(REPO_ROOT, 'dist', 'src', 'cli.js');
  if (!existsSync(cli)) throw new Error(`${cli} is missing: build first (npx tsc -p tsconfig.build.json)`);
}

/** A port that was free a moment ago (listen on 0, read it, close). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * A clean environment: nothing of the test runner's own configuration (ADMIN_TOKEN, DATABASE_URL, provider keys …)
 * leaks into the child. Only PATH and HOME are kept. Shedding on event-loop delay is off unless `extra` turns it on:
 * on a test machine busy with other test files a child's timers run late for reasons of its neighbours, not its load.
 */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ADMISSION_QUEUE_TARGET_MS: '0', ...extra };
}

export interface RunningCommand {
  child: ChildProcess;
  pid: number;
  stdout(): string;
  stderr(): string;
  /** Resolves with the exit code (or the signal name) once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  hasExited(): boolean;
  /** SIGKILL to the whole process group (workers included); safe to call more than once. */
  kill(): void;
}

const running = new Set<RunningCommand>();

/** Starts `node bin/unigate.js <args>` (of this build, or of the release whose entry `bin` is) in `cwd`, in its own process group. */
export function startCommand(args: string[], cwd: string, env: Record<string, string>, bin = BIN): RunningCommand {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  let done = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => {
      done = true;
      resolve({ code, signal });
    });
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error('spawn failed');
  const handle: RunningCommand = {
    child,
    pid,
    stdout: () => out,
    stderr: () => err,
    exited,
    hasExited: () => done,
    kill() {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone
      }
    },
  };
  running.add(handle);
  void exited.then(() => running.delete(handle));
  return handle;
}

/** Kills every command this file started that is still running (for afterEach/afterAll). */
export function killAll(): void {
  for (const handle of running) handle.kill();
}

/** Runs a one-shot command to its end, bounded. */
export async function runCommand(args: string[], cwd: string, env: Record<string, string>, timeoutMs = 20_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const handle = startCommand(args, cwd, env);
  const result = await withTimeout(handle.exited, timeoutMs, `unigate ${args.join(' ')}`).finally(() => handle.kill());
  return { code: result.code, stdout: handle.stdout(), stderr: handle.stderr() };
}

export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The socket inodes of every process in the process group `pgid` (Linux's /proc). */
async function socketInodesOfGroup(pgid: number): Promise<Set<string>> {
  const inodes = new Set<string>();
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
      // After the command name (in parentheses, which may hold spaces): state, parent pid, process group.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) continue;
      for (const fd of await readdir(`/proc/${pid}/fd`)) {
        const socket = /^socket:\[(\d+)\]$/.exec(await readlink(`/proc/${pid}/fd/${fd}`).catch(() => ''));
        if (socket?.[1] !== undefined) inodes.add(socket[1]);
      }
    } catch {
      // The process ended while it was read.
    }
  }
  return inodes;
}

/**
 * Whether the command's process group listens on `port`. A port found free can be bound first by another test
 * file's server, which then answers in the command's place; true where /proc cannot tell (not Linux).
 */
export async function listensOn(handle: RunningCommand, port: number): Promise<boolean> {
  if (!existsSync('/proc/net/tcp')) return true;
  const inodes = await socketInodesOfGroup(handle.pid);
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const rows = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    // Columns: slot, local address:port, remote address:port, state (0A is LISTEN), …, inode (the tenth).
    if (rows.some((row) => {
      const columns = row.trim().split(/\s+/);
      return columns[3] === '0A' && columns[1]?.endsWith(hexPort) === true && inodes.has(columns[9] ?? '');
    })) return true;
  }
  return false;
}

/**
 * Polls `GET url` until the command answers it with 200, bounded; fails early when the process exits. An answer on
 * the port from a process that is not the command's does not count.
 */
export async function waitForHttp(url: string, handle: RunningCommand, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const port = Number(new URL(url).port);
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (handle.hasExited()) throw new Error(`process exited before ${url} answered.\nstdout:\n${handle.stdout()}\nstderr:\n${handle.stderr()}`);
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200 && await listensOn(handle, port)) return;
      last = response.status === 200 ? `another process answers on port ${port}` : `status ${response.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms (${last}).\nstdout:\n${handle.stdout()}\nstderr:\n${handle.stderr()}`);
}

/** Waits until `predicate` holds, bounded. */
export async function waitUntil(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${what}: not within ${timeoutMs} ms`);
}

/** The one-time admin token as `serve` / `admin-token` print it. */
export function printedAdminTokens(output: string): string[] {
  return [...output.matchAll(/\badm_[A-Za-z0-9_-]{20,}/g)].map((match) => match[0]);
}

/** True while some process has the pid (signal 0 probes without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
