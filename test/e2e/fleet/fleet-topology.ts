/**
 * The fleet as operators run it, on this machine: Debian's nginx (deploy/nginx/unigate.conf) balancing three
 * `unigate serve` processes on a PostgreSQL database of their own (created per run on the machine's server) and one
 * Redis (TEST_REDIS_URL, or a redis-server of the run's own when it is unset).
 */
import { randomBytes } from 'node:crypto';
import { startNginxBalancer, type NginxBalancer } from '../../support/nginx-balancer.js';
import { startPrivateRedisServer, type PrivateRedisServer } from '../../support/private-redis-server.js';
import { freePort, waitUntil } from '../cli/cli-process.js';
import { startServeCluster, type ServeCluster, type ServeInstance } from '../serve-cluster.js';

export interface FleetTopology {
  cluster: ServeCluster;
  nginx: NginxBalancer;
  /** The instances now serving, one per slot (a restarted instance replaces its predecessor in its slot). */
  instances: ServeInstance[];
  /** SIGTERM to the instance in `slot`; resolves with its exit once it has drained and exited. */
  stop(slot: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Starts the instance of `slot` again on its ports (of this build, or of the release whose entry `bin` is). */
  restart(slot: number, bin?: string): Promise<ServeInstance>;
  /**
   * One step of a rolling restart or upgrade: SIGTERM to the instance in `slot`, which reports unready at once and
   * exits 0 once drained, then its successor on the same ports until it is ready. Returns the step's timings.
   */
  roll(slot: number, bin?: string): Promise<string>;
  close(): Promise<void>;
}

/** The status `/readyz` answers, or 0 when nothing answers. */
export function readyzStatus(url: string): Promise<number> {
  return fetch(`${url}/readyz`).then(async (response) => (await response.arrayBuffer(), response.status), () => 0);
}

export async function startFleetTopology(size: number, yaml: string[], environment: Record<string, string> = {}): Promise<FleetTopology> {
  const ownRedis: PrivateRedisServer | null = process.env.TEST_REDIS_URL === undefined ? await startPrivateRedisServer(await freePort()) : null;
  const redisUrl = process.env.TEST_REDIS_URL ?? ownRedis?.url ?? '';
  // The first instance migrates and applies gateway.yaml alone; the others then start side by side.
  const cluster = await startServeCluster(1, yaml, {
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: `fleet-${randomBytes(4).toString('hex')}:`,
    TRUST_PROXY: '127.0.0.1',
    ...environment,
  }, { database: 'postgres' });
  const others = await Promise.all(Array.from({ length: size - 1 }, (_unused, index) => cluster.start(`instance-${index + 1}`)));
  const instances = [...cluster.instances.slice(0, 1), ...others];
  const nginx = await startNginxBalancer({
    apiPort: await freePort(),
    apiUpstreams: instances.map((instance) => instance.port),
    consolePort: await freePort(),
    consoleUpstreams: instances.map((instance) => instance.consolePort),
  });
  const fleet: FleetTopology = {
    cluster,
    nginx,
    instances,
    async stop(slot) {
      const instance = instances[slot];
      if (instance === undefined) throw new Error(`no instance in slot ${slot}`);
      instance.process.child.kill('SIGTERM');
      return instance.process.exited;
    },
    async restart(slot, bin) {
      const previous = instances[slot];
      if (previous === undefined) throw new Error(`no instance in slot ${slot}`);
      const next = await cluster.start(previous.name, {}, previous.port, previous.consolePort, bin);
      instances[slot] = next;
      return next;
    },
    async roll(slot, bin) {
      const instance = instances[slot];
      if (instance === undefined) throw new Error(`no instance in slot ${slot}`);
      const stoppingAt = Date.now();
      const exited = fleet.stop(slot);
      await waitUntil(async () => (await readyzStatus(instance.url)) !== 200, 2000, `${instance.name} unready`);
      const exit = await exited;
      if (exit.code !== 0) throw new Error(`${instance.name} exited with ${JSON.stringify(exit)}:\n${instance.process.stderr().slice(-2000)}`);
      const exitedAt = Date.now();
      const next = await fleet.restart(slot, bin);
      await waitUntil(async () => (await readyzStatus(next.url)) === 200, 10_000, `${next.name} ready again`);
      return `${instance.name}: stop ${exitedAt - stoppingAt} ms, start ${Date.now() - exitedAt} ms`;
    },
    async close() {
      await nginx.stop();
      await cluster.close();
      await ownRedis?.destroy();
    },
  };
  return fleet;
}
