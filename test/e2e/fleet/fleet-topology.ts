/**
 * The fleet as operators run it, on this machine: Debian's nginx (deploy/nginx/unigate.conf) balancing three
 * `unigate serve` processes on a PostgreSQL database of their own (created per run on the machine's server) and one
 * Redis (TEST_REDIS_URL, or a redis-server of the run's own when it is unset).
 */
import { randomBytes } from 'node:crypto';
import { startNginxBalancer, type NginxBalancer } from '../../support/nginx-balancer.js';
import { startPrivateRedisServer, type PrivateRedisServer } from '../../support/private-redis-server.js';
import { freePort } from '../cli/cli-process.js';
import { startServeCluster, type ServeCluster, type ServeInstance } from '../serve-cluster.js';

export interface FleetTopology {
  cluster: ServeCluster;
  nginx: NginxBalancer;
  /** The instances now serving, one per slot (a restarted instance replaces its predecessor in its slot). */
  instances: ServeInstance[];
  /** SIGTERM to the instance in `slot`; resolves with its exit once it has drained and exited. */
  stop(slot: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Starts the instance of `slot` again on its ports. */
  restart(slot: number): Promise<ServeInstance>;
  close(): Promise<void>;
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
  return {
    cluster,
    nginx,
    instances,
    async stop(slot) {
      const instance = instances[slot];
      if (instance === undefined) throw new Error(`no instance in slot ${slot}`);
      instance.process.child.kill('SIGTERM');
      return instance.process.exited;
    },
    async restart(slot) {
      const previous = instances[slot];
      if (previous === undefined) throw new Error(`no instance in slot ${slot}`);
      const next = await cluster.start(previous.name, {}, previous.port, previous.consolePort);
      instances[slot] = next;
      return next;
    },
    async close() {
      await nginx.stop();
      await cluster.close();
      await ownRedis?.destroy();
    },
  };
}
