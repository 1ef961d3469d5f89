/** The credentials a guessing client may try: API keys, and the admin token. */
export type CredentialSurface = 'api-key' | 'admin-token';

export interface FailedAttemptOptions {
  /** Failures an address may have in one window before it is refused. */
  limit: number;
  windowMs: number;
  /** Addresses remembered at most; the oldest window is forgotten first. */
  maxEntries: number;
}

/** What counting one failure came to. */
export interface FailureOutcome {
  /** This failure is the one that reached the limit: the lockout starts now (report it once, not per refusal). */
  started: boolean;
  /**
   * Seconds left of a lockout that was already running before this failure (another instance started it), or
   * null. Such a failure is answered like any request the lockout refuses.
   */
  lockedForSeconds: number | null;
}

/**
 * Failed credentials per client IP address and surface. An address that has sent `limit` wrong credentials within
 * a window is locked out until the window ends. What a lockout refuses is the caller's decision (authenticate: only
 * credentials that would cost a lookup; the admin guard: everything).
 */
export interface FailedAttemptGuard {
  /** Seconds left of the address's lockout as this process knows it, or null. Synchronous, no I/O. */
  refusedFor(surface: CredentialSurface, address: string, now: number): number | null;
  /**
   * The same, asked of every instance's shared window when there is one (Redis): for a caller about to spend
   * something on the credential (a database lookup). A lockout found there is remembered here.
   */
  check(surface: CredentialSurface, address: string, now: number): Promise<number | null>;
  /** Counts one failure of the address. */
  recordFailure(surface: CredentialSurface, address: string, now: number): Promise<FailureOutcome>;
  close(): Promise<void>;
}

interface Window {
  startedAt: number;
  failures: number;
}

/**
 * The windows in this process: fixed windows opened by an address's first failure. Callers without failures never
 * touch the map beyond a size check.
 */
export class LocalFailedAttemptGuard implements FailedAttemptGuard {
  readonly #windows = new Map<string, Window>();

  constructor(private readonly options: FailedAttemptOptions) {}

  refusedFor(surface: CredentialSurface, address: string, now: number): number | null {
    if (this.#windows.size === 0) return null;
    const window = this.#windows.get(`${surface} ${address}`);
    if (window === undefined || window.failures < this.options.limit) return null;
    const remainingMs = window.startedAt + this.options.windowMs - now;
    return remainingMs > 0 ? Math.ceil(remainingMs / 1000) : null;
  }

  check(surface: CredentialSurface, address: string, now: number): Promise<number | null> {
    return Promise.resolve(this.refusedFor(surface, address, now));
  }

  recordFailure(surface: CredentialSurface, address: string, now: number): Promise<FailureOutcome> {
    return Promise.resolve(this.countFailure(surface, address, now));
  }

  /** `recordFailure` without the promise, for the Redis guard's fallback while Redis is away. */
  countFailure(surface: CredentialSurface, address: string, now: number): FailureOutcome {
    const id = `${surface} ${address}`;
    let window = this.#windows.get(id);
    if (window === undefined || now - window.startedAt >= this.options.windowMs) {
      this.#windows.delete(id);
      if (this.#windows.size >= this.options.maxEntries) this.#forgetOldest();
      window = { startedAt: now, failures: 0 };
      this.#windows.set(id, window);
    }
    window.failures += 1;
    return { started: window.failures === this.options.limit, lockedForSeconds: null };
  }

  close(): Promise<void> {
    this.#windows.clear();
    return Promise.resolve();
  }

  #forgetOldest(): void {
    const oldest = this.#windows.keys().next();
    if (oldest.done !== true) this.#windows.delete(oldest.value);
  }
}
