import type { Ledger } from '../billing/ledger.js';
import type { Clock } from '../shared/clock.js';
import { newId } from '../shared/ids.js';
import type { Logger } from '../shared/logger.js';
import { BackgroundJob } from '../shared/background-job.js';
import type { Storage } from '../storage/storage.js';

const BATCH = 100;

/**
 * Takes back what is left of sign-up credits that have expired, off the request path on every instance (each grant
 * is settled once: its storage transaction claims it). The credit counts as spent before money paid in later.
 * Credits fall due with time, not with an event, so the loop keeps a fixed interval: no expiry waits longer.
 */
export class SignUpCreditExpiry {
  readonly #job = new BackgroundJob(() => this.#pass());

  constructor(
    private readonly storage: Pick<Storage, 'signUpCredits'>,
    private readonly ledger: Pick<Ledger, 'forgetBalance' | 'flush'>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly intervalMs = 60_000,
  ) {}

  start(): void {
    this.#job.start({
      name: 'sign-up credit expiry',
      baseMs: this.intervalMs,
      maxMs: this.intervalMs,
      firstPassAfterMs: this.intervalMs,
      found: (settled) => settled > 0,
      logger: this.logger,
    });
  }

  /** No pass starts after this; settles once a running pass has ended. */
  stop(): Promise<void> {
    return this.#job.stop();
  }

  /** One pass (also what tests call): settles every grant due now; the number settled. */
  run(): Promise<number> {
    return this.#job.run();
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
