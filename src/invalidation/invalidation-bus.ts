/** A cached thing that changed through the admin API (or everything, when messages may have been missed). */
export type Invalidation =
  | { kind: 'key'; id: string }
  | { kind: 'account'; id: string }
  /** The account's end-customer rules changed (budgets, RPM). */
  | { kind: 'customers'; id: string }
  | { kind: 'tier'; name: string }
  /** Channels or models changed: the routing snapshot is re-read (and the channel's credentials, when named). */
  | { kind: 'catalog'; channelId?: string }
  /** Guardrail policies or their bindings to models, accounts and keys changed: the policy book is re-read. */
  | { kind: 'guardrails' }
  | { kind: 'all' };

/** Drops or re-reads what the message names; a returned promise settles once the change is in effect here. */
export type InvalidationHandler = (message: Invalidation) => void | Promise<void>;

/**
 * Tells every cache of every instance that something changed. `publish` settles once this process's handlers have
 * applied the change (so an admin answer is never ahead of this instance's caches) and, between the workers of one
 * `WORKERS>1` process, once every sibling has applied it too. With Redis it reaches the other instances within
 * milliseconds; without Redis, other instances rely on their caches' TTL (at most a second) and periodic re-reads.
 */
export interface InvalidationBus {
  /**
   * True while changes made on other instances are pushed to this one (the Redis subscriber is connected): caches
   * may then keep entries longer. False means caches must expire entries within a second on their own.
   */
  readonly live: boolean;
  publish(message: Invalidation): Promise<void>;
  subscribe(handler: InvalidationHandler): () => void;
  close(): Promise<void>;
}

/** The handlers of one process; the in-process bus and the base of the Redis one. */
export class LocalInvalidationBus implements InvalidationBus {
  readonly #handlers = new Set<InvalidationHandler>();

  get live(): boolean {
    return false;
  }

  publish(message: Invalidation): Promise<void> {
    return this.deliver(message);
  }

  subscribe(handler: InvalidationHandler): () => void {
    this.#handlers.add(handler);
    return () => this.#handlers.delete(handler);
  }

  /**
   * Runs every handler and settles when all have applied the change; one that throws or rejects does not stop the
   * others (a cache that cannot drop an entry still expires it by TTL).
   */
  protected async deliver(message: Invalidation): Promise<void> {
    const pending: Array<Promise<void>> = [];
    for (const handler of this.#handlers) {
      try {
        const applied = handler(message);
        if (applied !== undefined) pending.push(applied.catch(() => undefined));
      } catch {
        // See above.
      }
    }
    if (pending.length > 0) await Promise.all(pending);
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
    case 'customers':
      return typeof message.id === 'string';
    case 'tier':
      return typeof message.name === 'string';
    case 'catalog':
      return message.channelId === undefined || typeof message.channelId === 'string';
    case 'guardrails':
    case 'all':
      return true;
    default:
      return false;
  }
}
