import type { InvalidationBus } from '../invalidation/invalidation-bus.js';
import type { Clock } from '../shared/clock.js';
import type { CustomerRule } from '../domain/customer-records.js';

/** Where the book reads an account's rules (storage.customers). */
export interface CustomerRuleSource {
  listRules(accountId: string): Promise<CustomerRule[]>;
}

/** How long an account's rules are trusted while changes are pushed to this instance, and while they may not be. */
const LIVE_TTL_MS = 60_000;
const UNPUSHED_TTL_MS = 1000;
/** Accounts whose rules one process keeps at most (the oldest entry goes first). */
const MAX_ACCOUNTS = 50_000;

interface Entry {
  rules: ReadonlyMap<string, CustomerRule>;
  loadedAt: number;
}

const NO_RULES: ReadonlyMap<string, CustomerRule> = new Map();

/**
 * Each account's end-customer rules, from memory on the request path: read once per account, dropped on every
 * instance when the account's rules change (a `customers` invalidation) and otherwise re-read after a TTL. A request
 * that names no customer never asks.
 */
export class CustomerRuleBook {
  readonly #entries = new Map<string, Entry>();
  readonly #loading = new Map<string, Promise<ReadonlyMap<string, CustomerRule>>>();

  constructor(
    private readonly source: CustomerRuleSource,
    private readonly clock: Clock,
    private readonly invalidation: InvalidationBus,
  ) {
    invalidation.subscribe((message) => {
      if (message.kind === 'customers') this.forget(message.id);
      else if (message.kind === 'all') this.#entries.clear();
    });
  }

  /** The account's rules by customer ('' is the rule of every customer). */
  rulesOf(accountId: string): ReadonlyMap<string, CustomerRule> | Promise<ReadonlyMap<string, CustomerRule>> {
    const entry = this.#entries.get(accountId);
    const ttl = this.invalidation.live ? LIVE_TTL_MS : UNPUSHED_TTL_MS;
    if (entry !== undefined && this.clock.now() - entry.loadedAt < ttl) return entry.rules;
    return this.#load(accountId);
  }

  forget(accountId: string): void {
    this.#entries.delete(accountId);
  }

  #load(accountId: string): Promise<ReadonlyMap<string, CustomerRule>> {
    const pending = this.#loading.get(accountId);
    if (pending !== undefined) return pending;
    const loadedAt = this.clock.now();
    const loading = this.source.listRules(accountId).then((list) => {
      const rules = list.length === 0 ? NO_RULES : new Map(list.map((rule) => [rule.customer, rule]));
      if (this.#entries.size >= MAX_ACCOUNTS) {
        const oldest = this.#entries.keys().next();
        if (oldest.done !== true) this.#entries.delete(oldest.value);
      }
      this.#entries.set(accountId, { rules, loadedAt });
      return rules;
    }).finally(() => this.#loading.delete(accountId));
    this.#loading.set(accountId, loading);
    return loading;
  }
}
