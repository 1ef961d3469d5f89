import type { Clock } from '../shared/clock.js';
import type { Plan, Subscription } from '../domain/records.js';
import type { Storage } from '../storage/storage.js';

export interface ActiveSubscription {
  subscription: Subscription;
  plan: Plan;
}

interface Entry {
  value: Promise<ActiveSubscription[]>;
  fetchedAt: number;
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

  async active(accountId: string): Promise<ActiveSubscription[]> {
    const now = this.clock.now();
    let entry = this.#entries.get(accountId);
    if (entry === undefined || now - entry.fetchedAt >= this.options.ttlMs) {
      if (this.#entries.size >= this.options.maxEntries) this.#entries.clear();
      entry = { value: this.#read(accountId), fetchedAt: now };
      this.#entries.set(accountId, entry);
      entry.value.catch(() => this.#entries.delete(accountId));
    }
    const all = await entry.value;
    return all.filter(({ subscription }) => subscription.startsAt <= now && (subscription.cancelAt === null || subscription.cancelAt > now));
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
