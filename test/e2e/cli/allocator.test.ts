/**
 * The real process (`node bin/unigate.js serve`) runs on jemalloc where the library is installed: it starts itself
 * again in place (same pid, no wrapper process) with the library preloaded, unless the operator opted out
 * (MEMORY_ALLOCATOR=system) or preloads a library of their own; the programs it starts do not inherit the preload,
 * its own worker processes do.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureJemalloc } from '../../support/jemalloc.js';
import { assertBuilt, cleanEnv, freePort, killAll, REPO_ROOT, runCommand, startCommand, waitForHttp, waitUntil, type RunningCommand } from './cli-process.js';

const PROBE = path.join(REPO_ROOT, 'test', 'support', 'fixtures', 'allocator-probe.mjs');
const JEMALLOC_CONF = 'background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0';
/** A library any Linux machine has, preloaded as an operator's own choice. */
const ZLIB = ['/usr/lib/x86_64-linux-gnu', '/usr/lib/aarch64-linux-gnu', '/usr/lib64', '/usr/lib', '/lib/x86_64-linux-gnu', '/lib64']
  .map((directory) => path.join(directory, 'libz.so.1')).find((file) => existsSync(file));

const available = ensureJemalloc();

let directory: string;
let probeFile: string;
let started = 0;

beforeAll(async () => {
  if (!available) return;
  assertBuilt();
  directory = await mkdtemp(path.join(tmpdir(), 'unigate-allocator-'));
});

afterEach(() => killAll());

afterAll(async () => {
  killAll();
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
});

function mapsOf(pid: number): string {
  return readFileSync(`/proc/${pid}/maps`, 'utf8');
}

/** The environment a process was started (or last execve'd) with. */
function startEnvironmentOf(pid: number): Record<string, string> {
  return Object.fromEntries(readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean).map((entry) => {
    const at = entry.indexOf('=');
    return [entry.slice(0, at), entry.slice(at + 1)];
  }));
}

/** Every process whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // The parent's pid is the second field after the command name, which is in parentheses and may hold spaces.
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (parent === pid) children.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return children;
}

/** Starts `unigate serve` with the probe loaded and `extra` in its environment; resolves once it answers. */
async function serve(extra: Record<string, string>): Promise<RunningCommand> {
  started += 1;
  const [apiPort, consolePort] = [await freePort(), await freePort()];
  const data = path.join(directory, `gateway-${started}`);
  probeFile = path.join(directory, `probe-${started}`);
  const server = startCommand(['serve'], directory, cleanEnv({
    PORT: String(apiPort), CONSOLE_PORT: String(consolePort === apiPort ? apiPort + 1 : consolePort), DATA_DIR: data,
    ADMIN_TOKEN: 'adm_allocator_test_token_0123456789abcdef', NODE_OPTIONS: `--import=${PROBE}`, ALLOCATOR_PROBE_FILE: probeFile,
    ...extra,
  }));
  await waitForHttp(`http://127.0.0.1:${apiPort}/api/status`, server, 30_000);
  return server;
}

/** What a program started by process `pid` inherits, and whether jemalloc is mapped into `pid`. */
async function probe(pid: number): Promise<{ childEnvironment: Record<string, string>; jemalloc: boolean }> {
  const file = `${probeFile}.${pid}`;
  process.kill(pid, 'SIGUSR2');
  await waitUntil(() => existsSync(file), 10_000, `the probe of ${pid} answered`);
  const answer = JSON.parse(readFileSync(file, 'utf8')) as { childEnvironment: string; jemalloc: boolean };
  const childEnvironment = Object.fromEntries(answer.childEnvironment.split('\n').filter(Boolean).map((line) => {
    const at = line.indexOf('=');
    return [line.slice(0, at), line.slice(at + 1)];
  }));
  return { childEnvironment, jemalloc: answer.jemalloc };
}

describe.skipIf(!available)('the allocator of `unigate serve`', () => {
  it('is jemalloc, preloaded in the same process (no wrapper), and not passed on to the programs it starts', async () => {
    const server = await serve({});
    expect(mapsOf(server.pid)).toContain('libjemalloc.so.2');
    const environment = startEnvironmentOf(server.pid);
    expect(environment.LD_PRELOAD).toMatch(/\/libjemalloc\.so\.2$/);
    expect(environment.MALLOC_CONF).toBe(JEMALLOC_CONF);
    expect(childrenOf(server.pid)).toEqual([]);
    const seen = await probe(server.pid);
    expect(seen.jemalloc).toBe(true);
    expect(seen.childEnvironment.ALLOCATOR_PROBE_FILE).toBe(probeFile);
    expect(seen.childEnvironment).not.toHaveProperty('LD_PRELOAD');
    expect(seen.childEnvironment).not.toHaveProperty('MALLOC_CONF');
    expect(Object.keys(seen.childEnvironment).filter((name) => name.startsWith('UNIGATE_'))).toEqual([]);
  });

  it('keeps the operator\'s own MALLOC_CONF, and passes only that on', async () => {
    const server = await serve({ MALLOC_CONF: 'narenas:2' });
    expect(mapsOf(server.pid)).toContain('libjemalloc.so.2');
    expect(startEnvironmentOf(server.pid).MALLOC_CONF).toBe('narenas:2');
    const seen = await probe(server.pid);
    expect(seen.childEnvironment.MALLOC_CONF).toBe('narenas:2');
    expect(seen.childEnvironment).not.toHaveProperty('LD_PRELOAD');
  });

  it('is the system allocator with MEMORY_ALLOCATOR=system', async () => {
    const server = await serve({ MEMORY_ALLOCATOR: 'system' });
    expect(mapsOf(server.pid)).not.toContain('libjemalloc');
    expect(startEnvironmentOf(server.pid)).not.toHaveProperty('LD_PRELOAD');
    expect((await probe(server.pid)).jemalloc).toBe(false);
  });

  it.skipIf(ZLIB === undefined)('leaves an LD_PRELOAD the operator set as it is, for the gateway and what it starts', async () => {
    const server = await serve({ LD_PRELOAD: ZLIB! });
    const maps = mapsOf(server.pid);
    expect(maps).not.toContain('libjemalloc');
    expect(maps).toContain(ZLIB!);
    expect(startEnvironmentOf(server.pid).LD_PRELOAD).toBe(ZLIB);
    const seen = await probe(server.pid);
    expect(seen.childEnvironment.LD_PRELOAD).toBe(ZLIB);
    expect(seen.childEnvironment).not.toHaveProperty('MALLOC_CONF');
  });

  it('is jemalloc in the gateway\'s own worker processes too', async () => {
    const server = await serve({ WORKERS: '2' });
    await waitUntil(() => childrenOf(server.pid).length === 2, 20_000, 'two workers started');
    for (const worker of childrenOf(server.pid)) {
      await waitUntil(() => mapsOf(worker).includes('libjemalloc.so.2'), 10_000, `worker ${worker} runs on jemalloc`);
      const seen = await probe(worker);
      expect(seen.jemalloc).toBe(true);
      expect(seen.childEnvironment).not.toHaveProperty('LD_PRELOAD');
    }
  });

  it('is left alone by the short commands', async () => {
    const file = path.join(directory, 'probe-help');
    const result = await runCommand(['help'], directory, cleanEnv({ NODE_OPTIONS: `--import=${PROBE}`, ALLOCATOR_PROBE_FILE: file }));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: unigate <command>');
    expect(JSON.parse(readFileSync(`${file}.exit`, 'utf8'))).toEqual({ jemalloc: false });
  });

  it('rejects a MEMORY_ALLOCATOR it does not know', async () => {
    const result = await runCommand(['serve'], directory, cleanEnv({ MEMORY_ALLOCATOR: 'tcmalloc', DATA_DIR: path.join(directory, 'unknown') }));
    expect(result.code).not.toBe(0);
    expect(result.stderr + result.stdout).toContain('MEMORY_ALLOCATOR must be jemalloc or system, got "tcmalloc"');
  });
});
