import cluster, { type Worker } from 'node:cluster';
import { isInvalidation, LocalInvalidationBus, type Invalidation } from './invalidation-bus.js';

/**
 * Invalidations between the workers of one `WORKERS>1` process when there is no Redis. A worker's `publish` goes
 * to the primary, which hands it to every other worker and answers once each has applied it (or has gone, or
 * `ACK_TIMEOUT_MS` passed). So an admin answer from one worker is never ahead of its siblings' caches.
 */

/** A worker that does not answer within this long is not waited for (its caches still expire by TTL). */
export const ACK_TIMEOUT_MS = 2000;

type ClusterMessage =
  | { type: 'unigate:invalidate'; id: number; message: Invalidation }
  | { type: 'unigate:invalidation-applied'; id: number };

function isClusterMessage(value: unknown): value is ClusterMessage {
  if (value === null || typeof value !== 'object') return false;
  const candidate = value as Record<string, unknown>;
  if (typeof candidate.id !== 'number') return false;
  if (candidate.type === 'unigate:invalidation-applied') return true;
  return candidate.type === 'unigate:invalidate' && isInvalidation(candidate.message);
}

/** The worker side. `live` stays false: other instances (without Redis) still reach this one only through TTLs. */
export class ClusterInvalidationBus extends LocalInvalidationBus {
  #nextId = 1;
  readonly #waiting = new Map<number, () => void>();
  readonly #onMessage = (value: unknown): void => {
    if (!isClusterMessage(value)) return;
    if (value.type === 'unigate:invalidation-applied') {
      this.#waiting.get(value.id)?.();
      return;
    }
    const { id } = value;
    void this.deliver(value.message).then(() => this.#send({ type: 'unigate:invalidation-applied', id }));
  };

  constructor() {
    super();
    process.on('message', this.#onMessage);
  }

  override async publish(message: Invalidation): Promise<void> {
    const applied = this.deliver(message);
    if (!process.connected) return applied;
    const id = this.#nextId++;
    const siblings = new Promise<void>((resolve) => {
      const timer = setTimeout(done, ACK_TIMEOUT_MS);
      timer.unref();
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#waiting.set(id, done);
    }).finally(() => this.#waiting.delete(id));
    this.#send({ type: 'unigate:invalidate', id, message });
    await Promise.all([applied, siblings]);
  }

  #send(message: ClusterMessage): void {
    if (!process.connected) return;
    process.send?.(message, undefined, {}, () => undefined);
  }

  override async close(): Promise<void> {
    process.off('message', this.#onMessage);
    for (const done of this.#waiting.values()) done();
    await super.close();
  }
}

/**
 * The primary side: relays each worker's invalidation to every other worker and tells the publisher once all of
 * them applied it. Call once in the primary before forking.
 */
export function relayInvalidationsBetweenWorkers(): void {
  /** Relayed copies awaiting a worker's answer, by the primary's own id. */
  const pending = new Map<number, { worker: Worker; finish: () => void }>();
  let nextId = 1;

  const applyOn = (worker: Worker, message: Invalidation): Promise<void> =>
    new Promise<void>((resolve) => {
      const id = nextId++;
      const timer = setTimeout(finish, ACK_TIMEOUT_MS);
      function finish(): void {
        clearTimeout(timer);
        pending.delete(id);
        resolve();
      }
      pending.set(id, { worker, finish });
      worker.send({ type: 'unigate:invalidate', id, message } satisfies ClusterMessage, undefined, () => undefined);
    });

  cluster.on('message', (from: Worker, value: unknown) => {
    if (!isClusterMessage(value)) return;
    if (value.type === 'unigate:invalidation-applied') {
      const waiting = pending.get(value.id);
      if (waiting?.worker === from) waiting.finish();
      return;
    }
    const siblings = Object.values(cluster.workers ?? {}).filter((worker): worker is Worker => worker !== undefined && worker !== from && worker.isConnected());
    void Promise.all(siblings.map((worker) => applyOn(worker, value.message))).then(() => {
      if (from.isConnected()) from.send({ type: 'unigate:invalidation-applied', id: value.id } satisfies ClusterMessage, undefined, () => undefined);
    });
  });
  cluster.on('exit', (worker: Worker) => {
    for (const waiting of [...pending.values()]) if (waiting.worker === worker) waiting.finish();
  });
}
