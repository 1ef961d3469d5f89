/**
 * A PostgreSQL server of the test's own (initdb into a temporary directory, its own port, trust auth), so a test
 * may stop and start it without touching the machine's shared server. Runs the binaries as the `postgres` user
 * when the test runs as root (PostgreSQL refuses to run as root).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface PrivatePostgresCluster {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  start(): Promise<void>;
  /** Fast shutdown: open sessions are terminated, as in a restart under load. */
  stop(): Promise<void>;
  destroy(): Promise<void>;
}

/** The directory of initdb/pg_ctl, or null when PostgreSQL's server binaries are not installed. */
export function postgresBinaries(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) {
    const bin = path.join(root, version, 'bin');
    if (existsSync(path.join(bin, 'initdb')) && existsSync(path.join(bin, 'pg_ctl'))) return bin;
  }
  return null;
}

function asPostgresUser(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

async function exec(command: string, args: string[]): Promise<void> {
  const [file, argv] = asPostgresUser(command, args);
  await run(file, argv, { timeout: 60_000 });
}

export async function createPrivatePostgresCluster(port: number): Promise<PrivatePostgresCluster> {
  const bin = postgresBinaries();
  if (bin === null) throw new Error('PostgreSQL server binaries not found under /usr/lib/postgresql');
  const directory = await mkdtemp(path.join(tmpdir(), 'unigate-pg-'));
  await chmod(directory, 0o777);
  const data = path.join(directory, 'data');
  const log = path.join(directory, 'server.log');
  await exec(path.join(bin, 'initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${directory} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=100`;
  const cluster: PrivatePostgresCluster = {
    port,
    url: (database = 'postgres') => `postgres://postgres@127.0.0.1:${port}/${database}`,
    start: () => exec(path.join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-o', options, '-w', '-t', '30', 'start']),
    stop: () => exec(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']),
    async destroy() {
      await exec(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
      await rm(directory, { recursive: true, force: true });
    },
  };
  await cluster.start();
  return cluster;
}
