import type { Ledger } from '../billing/ledger.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { Storage } from '../storage/storage.js';

const BATCH = 100;

/**
 * Takes back what is left of sign-up credits that have expired, off the request path on every instance (each grant
 * is settled once: its storage transaction claims it). The credit counts as spent before money paid in later.
 */
export class SignUpCreditExpiry {
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<number> | null = null;

  constructor(
    private readonly storage: Pick<Storage, 'signUpCredits'>,
    private readonly ledger: Pick<Ledger, 'forgetBalance' | 'flush'>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly intervalMs = 60_000,
  ) {}

  start(): void {
    if (this.#timer !== null) return;
    this.#timer = setInterval(() => {
      void this.run().catch((error: unknown) => this.logger.warn('sign-up credit expiry failed', describeError(error)));
    }, this.intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** One pass (also what tests call): settles every grant due now; the number settled. */
  run(): Promise<number> {
    this.#running ??= this.#pass().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #pass(): Promise<number> {
    let settled = 0;
    // Charges this instance holds settle first, so the balance read below is the account's.
    await this.ledger.flush();
    for (;;) {
      const now = this.clock.now();
      const due = await this.storage.signUpCredits.dueExpiries(now, BATCH);
      if (due.length === 0) return settled;
      for (const accountId of due) {
        const taken = await this.storage.signUpCredits.reclaim({ accountId, entryId: newId('led', now), reason: 'Sign-up credit expired (unused part)', now });
        if (taken === null) continue;
        settled += 1;
        this.ledger.forgetBalance(accountId);
        this.logger.info('sign-up credit expired', { account: accountId, takenBackNano: taken.toString() });
      }
      if (due.length < BATCH) return settled;
    }
  }
}
