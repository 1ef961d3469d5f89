/** A cached thing that changed through the admin API (or everything, when messages may have been missed). */
export type Invalidation =
  | { kind: 'key'; id: string }
  | { kind: 'account'; id: string }
  | { kind: 'tier'; name: string }
  | { kind: 'all' };

export type InvalidationHandler = (message: Invalidation) => void;

/**
 * Tells every cache of every instance that something changed. `publish` runs this process's handlers before it
 * returns (so an admin answer is never ahead of this instance's caches) and, with Redis, reaches the other
 * instances within milliseconds. Without Redis, other instances rely on their caches' TTL (at most a second).
 */
export interface InvalidationBus {
  /**
   * True while changes made on other instances are pushed to this one (the Redis subscriber is connected): caches
   * may then keep entries longer. False means caches must expire entries within a second on their own.
   */
  readonly live: boolean;
  publish(message: Invalidation): void;
  subscribe(handler: InvalidationHandler): () => void;
  close(): Promise<void>;
}

/** The handlers of one process; the in-process bus and the base of the Redis one. */
export class LocalInvalidationBus implements InvalidationBus {
  readonly #handlers = new Set<InvalidationHandler>();

  get live(): boolean {
    return false;
  }

  publish(message: Invalidation): void {
    this.deliver(message);
  }

  subscribe(handler: InvalidationHandler): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  /** Runs every handler; one that throws does not stop the others. */
  protected deliver(message: Invalidation): void {
    for (const handler of this.#handlers) {
      try {
        handler(message);
      } catch {
        // A cache that cannot drop an entry still expires it by TTL.
      }
    }
  }

  async close(): Promise<void> {
    this.#handlers.clear();
  }
}

export function isInvalidation(value: unknown): value is Invalidation {
  if (value === null || typeof value !== 'object') return false;
  const message = value as Record<string, unknown>;
  switch (message.kind) {
    case 'key':
    case 'account':
      return typeof message.id === 'string';
    case 'tier':
      return typeof message.name === 'string';
    case 'all':
      return true;
    default:
      return false;
  }
}
