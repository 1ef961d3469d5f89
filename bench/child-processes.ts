/** Child processes of the benchmark (mock upstreams, the gateway): start, wait for, stop. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import { createServer } from 'node:net';


export function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}: expected a non-negative number, got ${raw}`);
  return n;
}

/**
 * A gateway child's environment: the caller's without what could reach real providers, shared state or the caller's
 * config files, on 127.0.0.1 in production mode, plus `settings` (port, admin token, storage, …).
 */
export function gatewayEnvironment(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/(_API_KEY|_BASE_URL|ADMIN_TOKEN|DATABASE_URL|REDIS_URL|REDIS_KEY_PREFIX|GATEWAY_CONFIG|SMTP_URL)$/.test(k) || k === 'WORKERS') continue;
    env[k] = v;
  }
  return { ...env, NODE_ENV: process.env.NODE_ENV ?? 'production', HOST: '127.0.0.1', ...settings };
}

/** A mock upstream's arguments: any free port, `chunkDelayMs` between streamed chunks, gone when stdin closes. */
export function mockUpstreamArgs(entry: string, chunkDelayMs: number): string[] {
  return [entry, '--port', '0', '--chunk-delay-ms', String(chunkDelayMs), '--exit-on-stdin-close'];
}

/** The bare proxy's arguments (bench/bare-proxy.ts) in front of the origin of `upstream`, gone when stdin closes. */
export function bareProxyArgs(entry: string, upstream: string): string[] {
  return [entry, '--upstream', new URL(upstream).origin, '--exit-on-stdin-close'];
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((res, rej) => {
    srv.once('error', rej);
    srv.listen(0, '127.0.0.1', () => res());
  });
  const addr = srv.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  await new Promise<void>((res) => srv.close(() => res()));
  if (!port) throw new Error('could not find a free port');
  return port;
}

export interface Child {
  name: string;
  proc: ChildProcess;
  exited: Promise<number | null>;
  logPath: string;
}

export function startChild(name: string, args: string[], opts: { env: NodeJS.ProcessEnv; cwd: string; logPath: string; stdinPipe: boolean }): Child {
  const log: WriteStream = createWriteStream(opts.logPath);
  // detached: the child leads its own process group, so stopChild() also reaches its workers.
  const proc = spawn(process.execPath, args, {
    cwd: opts.cwd,
    env: opts.env,
    detached: true,
    stdio: [opts.stdinPipe ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  proc.stdout?.pipe(log, { end: false });
  proc.stderr?.pipe(log, { end: false });
  const exited = new Promise<number | null>((res) => {
    proc.once('exit', (code, signal) => {
      log.end(`\n[bench] ${name} exited: code=${code} signal=${signal}\n`);
      res(code);
    });
    proc.once('error', (err) => {
      log.end(`\n[bench] ${name} failed to spawn: ${err.message}\n`);
      res(-1);
    });
  });
  return { name, proc, exited, logPath: opts.logPath };
}

export function signalGroup(child: Child, signal: NodeJS.Signals): void {
  if (child.proc.exitCode !== null || child.proc.signalCode !== null || child.proc.pid === undefined) return;
  try {
    process.kill(-child.proc.pid, signal);
  } catch {
    try {
      child.proc.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

export async function stopChild(child: Child): Promise<void> {
  child.proc.stdin?.end();
  signalGroup(child, 'SIGTERM');
  const done = await Promise.race([child.exited.then(() => true), sleep(3000).then(() => false)]);
  if (!done) {
    signalGroup(child, 'SIGKILL');
    await Promise.race([child.exited, sleep(2000)]);
  }
}

export function logTail(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export async function waitForLine(child: Child, prefix: string, timeoutMs: number): Promise<string> {
  return new Promise((res, rej) => {
    let buf = '';
    const timer = setTimeout(() => finish(new Error(`${child.name}: no "${prefix}" line within ${timeoutMs} ms`)), timeoutMs);
    const onData = (d: Buffer): void => {
      buf += d.toString('utf8');
      const line = buf.split('\n').find((l) => l.startsWith(prefix));
      if (line !== undefined) finish(null, line.slice(prefix.length).trim());
      else if (buf.length > 65_536) buf = buf.slice(-4096);
    };
    const onExit = (): void => finish(new Error(`${child.name} exited before printing "${prefix}"`));
    function finish(err: Error | null, value?: string): void {
      clearTimeout(timer);
      child.proc.stdout?.off('data', onData);
      child.proc.off('exit', onExit);
      if (err) rej(err);
      else res(value ?? '');
    }
    child.proc.stdout?.on('data', onData);
    child.proc.once('exit', onExit);
  });
}

export async function waitForStatus(url: string, child: Child, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) throw new Error(`gateway exited during start-up (${last})`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await res.arrayBuffer();
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    await sleep(250);
  }
  throw new Error(`gateway did not answer 200 on ${url} within ${timeoutMs} ms (last: ${last})`);
}

