/**
 * Debian's nginx in front of gateway instances on 127.0.0.1, configured by the project's own balancer file
 * (deploy/nginx/unigate.conf) with only the addresses changed: the compose service names become the instances'
 * ports and the listen ports become the test's. Installed with apt-get when missing, as Chromium is.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ensureDebianPackage } from './debian-package.js';

const NGINX = '/usr/sbin/nginx';
const BALANCER_FILE = path.resolve(import.meta.dirname, '../../deploy/nginx/unigate.conf');

export interface BalancedAddresses {
  /** The port nginx listens on for the API, and each instance's API port (in the order of the file's servers). */
  apiPort: number;
  apiUpstreams: number[];
  consolePort: number;
  consoleUpstreams: number[];
}

export interface NginxBalancer {
  apiUrl: string;
  consoleUrl: string;
  /**
   * The error log's lines about requests nginx could not pass on, without the refused connections it retried on
   * the next instance: what explains a 502 the load saw.
   */
  unretriedErrors(): Promise<string>;
  stop(): Promise<void>;
}

/** True when nginx is installed (after installing Debian's nginx-light when it was not and we may). */
export function nginxAvailable(): boolean {
  return ensureDebianPackage(NGINX, 'nginx-light', 'nginx balancer');
}

/** deploy/nginx/unigate.conf with the test's addresses. */
export async function balancerConfiguration(addresses: BalancedAddresses): Promise<string> {
  let text = await readFile(BALANCER_FILE, 'utf8');
  const replaceServers = (upstream: string, ports: number[]): void => {
    text = text.replace(new RegExp(`(upstream ${upstream} \\{)([^}]*)(\\})`), (_whole, head: string, body: string, tail: string) => {
      let index = 0;
      const replaced = body.replace(/^(\s*server\s+)\S+?:\d+/gm, (_server, prefix: string) => {
        const port = ports[index];
        index += 1;
        if (port === undefined) throw new Error(`deploy/nginx/unigate.conf has more ${upstream} servers than instances`);
        return `${prefix}127.0.0.1:${port}`;
      });
      if (index !== ports.length) throw new Error(`deploy/nginx/unigate.conf has ${index} ${upstream} servers, the test ${ports.length} instances`);
      return head + replaced + tail;
    });
  };
  replaceServers('unigate_api', addresses.apiUpstreams);
  replaceServers('unigate_console', addresses.consoleUpstreams);
  const listens = [addresses.apiPort, addresses.consolePort];
  let listen = 0;
  text = text.replace(/^(\s*listen\s+)\d+;/gm, (_line, prefix: string) => `${prefix}127.0.0.1:${listens[listen++] ?? 0};`);
  return text;
}

/** Starts nginx in the foreground (its own prefix directory, nothing of the machine's nginx touched). */
export async function startNginxBalancer(addresses: BalancedAddresses): Promise<NginxBalancer> {
  const directory = await mkdtemp(path.join(tmpdir(), 'unigate-nginx-'));
  await chmod(directory, 0o755);
  const temporary = path.join(directory, 'temp');
  await mkdir(temporary, { mode: 0o777 });
  await chmod(temporary, 0o777);
  await writeFile(path.join(directory, 'unigate.conf'), await balancerConfiguration(addresses));
  const errorLog = path.join(directory, 'error.log');
  await writeFile(path.join(directory, 'nginx.conf'), [
    `pid ${directory}/nginx.pid;`,
    `error_log ${errorLog} warn;`,
    'worker_processes 1;',
    'events { worker_connections 1024; }',
    'http {',
    '  access_log off;',
    `  client_body_temp_path ${temporary}/body;`,
    `  proxy_temp_path ${temporary}/proxy;`,
    `  fastcgi_temp_path ${temporary}/fastcgi;`,
    `  uwsgi_temp_path ${temporary}/uwsgi;`,
    `  scgi_temp_path ${temporary}/scgi;`,
    `  include ${directory}/unigate.conf;`,
    '}',
    '',
  ].join('\n'));
  const check = spawnSync(NGINX, ['-t', '-p', directory, '-c', path.join(directory, 'nginx.conf'), '-e', errorLog], { encoding: 'utf8', timeout: 10_000 });
  if (check.status !== 0) throw new Error(`nginx -t failed: ${check.stderr}`);
  const child: ChildProcess = spawn(NGINX, ['-p', directory, '-c', path.join(directory, 'nginx.conf'), '-e', errorLog, '-g', 'daemon off;'], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const apiUrl = `http://127.0.0.1:${addresses.apiPort}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    try {
      await (await fetch(`${apiUrl}/healthz`, { signal: AbortSignal.timeout(1000) })).arrayBuffer();
      break;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`nginx did not answer on ${apiUrl}: ${String(error)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    apiUrl,
    consoleUrl: `http://127.0.0.1:${addresses.consolePort}`,
    unretriedErrors: async () => (await readFile(errorLog, 'utf8').catch(() => ''))
      .split('\n')
      .filter((line) => /\[(error|crit|alert|emerg)\]/.test(line) && !line.includes('(111: Connection refused) while connecting to upstream'))
      .slice(-20)
      .join('\n'),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGQUIT');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      await rm(directory, { recursive: true, force: true });
    },
  };
}
