import { GatewayError } from '../errors/gateway-error.js';
import type { Clock } from '../shared/clock.js';
import type { GrowOutcome, GrowRequest } from './batch-growing.js';
import type { ReserveRequest } from './ledger-requests.js';
import type { LocalLeases } from './local-leases.js';
import { growRequestOf } from './money-commit.js';
import type { Reservation } from './money-pools.js';
import { insufficientBalance, keyPoolRefusal, subscriptionQuotaRefusal } from './money-refusals.js';

export interface Waiter {
  grow: GrowRequest;
  /** The request as asked (none for a holder's, which storage alone answers), and whether it only asks (a probe). */
  request?: ReserveRequest;
  probe: boolean;
  resolve: (reservation: Reservation) => void;
  reject: (error: unknown) => void;
}

/** Reservations waiting for the next group commit to grow a hold for them, answered by it or by the leases. */
export class WaitingReservations {
  #waiters: Waiter[] = [];

  get length(): number {
    return this.#waiters.length;
  }

  /** Queues a reservation for storage: resolves with its reservation, or rejects with its refusal. */
  add(request: ReserveRequest, probe: boolean): Promise<Reservation> {
    return new Promise<Reservation>((resolve, reject) => {
      this.#waiters.push({
        grow: growRequestOf(request, probe),
        ...(request.holder === undefined ? { request } : {}),
        probe,
        resolve,
        reject,
      });
    });
  }

  /** Every waiting reservation, for the transaction about to run. */
  takeAll(): Waiter[] {
    const waiters = this.#waiters;
    this.#waiters = [];
    return waiters;
  }

  /**
   * Reservations that asked while a step ran found their pools busy (a transaction recomputing them), not
   * necessarily empty: the committed leases may hold them now, and then no transaction is needed for them.
   */
  serveFromLeases(leases: LocalLeases, clock: Clock): void {
    if (this.#waiters.length > 0) this.#waiters = this.#waiters.filter((waiter) => !servedLocally(waiter, leases, clock));
  }
}

/** Answers a waiting reservation from this instance's leases when they have room now; false when storage must. */
function servedLocally(waiter: Waiter, leases: LocalLeases, clock: Clock): boolean {
  if (waiter.request === undefined) return false;
  const local = leases.plan(waiter.request, clock.now());
  if (local === null) return false;
  if (local instanceof GatewayError) {
    waiter.reject(local);
    return true;
  }
  if (!waiter.probe) leases.take(local, clock.now());
  waiter.resolve(local);
  return true;
}

/** Answers each waiter with its outcome in the committed plan: its reservation, or the spec's refusal. */
export function answerWaiters(waiters: readonly Waiter[], outcomes: readonly GrowOutcome[]): void {
  outcomes.forEach((outcome, index) => {
    const waiter = waiters[index] as Waiter;
    if ('reservation' in outcome) waiter.resolve(outcome.reservation);
    else if ('pool' in outcome) waiter.reject(keyPoolRefusal(outcome, waiter.grow.amountNano));
    else if ('resetsInMs' in outcome) waiter.reject(subscriptionQuotaRefusal(outcome.resetsInMs));
    else waiter.reject(insufficientBalance());
  });
}
