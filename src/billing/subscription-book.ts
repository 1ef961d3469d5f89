import type { Clock } from '../shared/clock.js';
import type { Plan, Subscription } from '../domain/records.js';
import type { Storage } from '../storage/storage.js';

export interface ActiveSubscription {
  subscription: Subscription;
  plan: Plan;
}

interface Entry {
  value: Promise<ActiveSubscription[]>;
  /** The read's list once it settled (null while it is in flight). */
  resolved: ActiveSubscription[] | null;
  fetchedAt: number;
}

/** Of an account's subscriptions, those it may pay with at `now`. */
function activeAt(all: readonly ActiveSubscription[], now: number): ActiveSubscription[] {
  return all.filter(({ subscription }) => subscription.startsAt <= now && (subscription.cancelAt === null || subscription.cancelAt > now));
}

/**
 * The subscriptions an account may pay with right now (active, started, not past a cancellation), oldest first,
 * with their plans: read from storage at most once per TTL per account and shared by concurrent requests.
 * Rollover and quota are decided by the ledger's transactions, not here.
 */
export class SubscriptionBook {
  readonly #entries = new Map<string, Entry>();

  constructor(
    private readonly storage: Storage,
    private readonly clock: Clock,
    private readonly options: { ttlMs: number; maxEntries: number },
  ) {}

  /**
   * `active` in the same turn when the account's entry is fresh and its read has settled: the same list `active`
   * answers then. Null when storage must be read (no entry, a stale one, or its read still in flight).
   */
  activeNow(accountId: string): ActiveSubscription[] | null {
    const now = this.clock.now();
    const resolved = this.#fresh(accountId, now)?.resolved ?? null;
    return resolved === null ? null : activeAt(resolved, now);
  }

  async active(accountId: string): Promise<ActiveSubscription[]> {
    const known = this.activeNow(accountId);
    if (known !== null) return known;
    const now = this.clock.now();
    let entry = this.#fresh(accountId, now);
    if (entry === undefined) {
      if (this.#entries.size >= this.options.maxEntries) this.#entries.clear();
      const read: Entry = { value: this.#read(accountId), resolved: null, fetchedAt: now };
      this.#entries.set(accountId, read);
      read.value.then((all) => {
        read.resolved = all;
      }, () => this.#entries.delete(accountId));
      entry = read;
    }
    return activeAt(await entry.value, now);
  }

  /** The account's entry while it is within its TTL. */
  #fresh(accountId: string, now: number): Entry | undefined {
    const entry = this.#entries.get(accountId);
    return entry === undefined || now - entry.fetchedAt >= this.options.ttlMs ? undefined : entry;
  }

  forget(accountId: string): void {
    this.#entries.delete(accountId);
  }

  async #read(accountId: string): Promise<ActiveSubscription[]> {
    const subscriptions = (await this.storage.subscriptions.listByAccount(accountId)).filter((subscription) => subscription.status === 'active');
    const result: ActiveSubscription[] = [];
    for (const subscription of subscriptions) {
      const plan = await this.storage.plans.getById(subscription.planId);
      if (plan !== null) result.push({ subscription, plan });
    }
    return result;
  }
}
