import type { KeyVerifier } from '../auth/key-verifier.js';
import type { Ledger } from '../billing/ledger.js';
import type { SubscriptionBook } from '../billing/subscription-book.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Clock } from '../shared/clock.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { Account } from '../domain/records.js';
import type { Storage } from '../storage/storage.js';

export type AccountLifecycleEvent = 'enabled' | 'disabled' | 'deleted';

/**
 * Told after an account's status changed (already stored). Listeners end what lives outside the gateway's own
 * tables — console sessions on `disabled` and `deleted`, stored billing details on `deleted` — and must be safe to
 * run again: a repeated DELETE (or a retry after a listener failed) calls them again.
 */
export type AccountLifecycleListener = (event: AccountLifecycleEvent, account: Account) => Promise<void> | void;

export interface AccountLifecycleDependencies {
  storage: Storage;
  /** Drops the account's cached keys here and on every instance. */
  keys: Pick<KeyVerifier, 'invalidateAccount'>;
  ledger: Pick<Ledger, 'forgetSubscription'>;
  subscriptions: Pick<SubscriptionBook, 'forget'>;
  clock: Clock;
  logger: Logger;
}

/**
 * Disabling, enabling and deleting accounts (admin API and CLI alike). A disabled account keeps everything, its keys
 * answer 403 within the key cache's bound on every instance (at once where invalidations are live); requests
 * already admitted finish and are billed. Deleting revokes every key, cancels subscriptions, erases personal data
 * and keeps ledger entries, invoices and usage rows, so the books still balance.
 */
export class AccountLifecycle {
  readonly #listeners: AccountLifecycleListener[] = [];

  constructor(private readonly dependencies: AccountLifecycleDependencies) {}

  /** Adds a listener; returns its removal. */
  onChange(listener: AccountLifecycleListener): () => void {
    this.#listeners.push(listener);
    return () => {
      const index = this.#listeners.indexOf(listener);
      if (index >= 0) this.#listeners.splice(index, 1);
    };
  }

  /** Enables or disables; null when there is no such account. A deleted account stays deleted (409). */
  async setStatus(accountId: string, status: 'enabled' | 'disabled'): Promise<Account | null> {
    const { storage, clock, keys } = this.dependencies;
    const existing = await storage.accounts.getById(accountId);
    if (existing === null) return null;
    if (existing.status === 'deleted') throw new GatewayError('conflict', 'This account has been deleted; it cannot be enabled or changed.');
    const updated = existing.status === status ? existing : await storage.accounts.update(accountId, { status }, clock.now());
    if (updated === null) return null;
    await keys.invalidateAccount(accountId);
    await this.#tell(status, updated);
    return updated;
  }

  /** Deletes (safe to repeat: a deleted account answers as it is); null when there is no such account. */
  async delete(accountId: string): Promise<Account | null> {
    const { storage, clock, keys, ledger, subscriptions } = this.dependencies;
    const before = await storage.subscriptions.listByAccount(accountId);
    const erased = await storage.accounts.erase(accountId, clock.now());
    if (erased === null) return null;
    for (const subscription of before) ledger.forgetSubscription(subscription.id);
    subscriptions.forget(accountId);
    await keys.invalidateAccount(accountId);
    await this.#tell('deleted', erased);
    return erased;
  }

  async #tell(event: AccountLifecycleEvent, account: Account): Promise<void> {
    const failures: unknown[] = [];
    for (const listener of this.#listeners) {
      try {
        await listener(event, account);
      } catch (error) {
        failures.push(error);
        this.dependencies.logger.error('account lifecycle listener failed', { event, account: account.id, ...describeError(error) });
      }
    }
    if (failures.length > 0) {
      throw new GatewayError('internal_error', `The account is ${event}, but ${failures.length} follow-up step(s) failed; repeat the request to retry them.`);
    }
  }
}
