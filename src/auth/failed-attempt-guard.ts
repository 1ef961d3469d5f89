/** The credentials a guessing client may try: API keys, and the admin token. */
export type CredentialSurface = 'api-key' | 'admin-token';

export interface FailedAttemptOptions {
  /** Failures an address may have in one window before it is refused. */
  limit: number;
  windowMs: number;
  /** Addresses remembered at most; the oldest window is forgotten first. */
  maxEntries: number;
}

interface Window {
  startedAt: number;
  failures: number;
}

/**
 * Failed credentials per client IP address and surface, in this process. An address that has sent `limit` wrong
 * API keys (or admin tokens) within a window is refused before its credential is even checked until the window
 * ends, so guessing costs a window per `limit` tries. Callers without failures never touch the map beyond a size
 * check.
 */
export class FailedAttemptGuard {
  readonly #windows = new Map<string, Window>();

  constructor(private readonly options: FailedAttemptOptions) {}

  /** Seconds until the address may try again, or null when it may try now. */
  refusedFor(surface: CredentialSurface, address: string, now: number): number | null {
    if (this.#windows.size === 0) return null;
    const window = this.#windows.get(`${surface} ${address}`);
    if (window === undefined || window.failures < this.options.limit) return null;
    const remainingMs = window.startedAt + this.options.windowMs - now;
    return remainingMs > 0 ? Math.ceil(remainingMs / 1000) : null;
  }

  /** Counts one failure; true when it is the one that reaches the limit (log it once, not on every refusal). */
  recordFailure(surface: CredentialSurface, address: string, now: number): boolean {
    const id = `${surface} ${address}`;
    let window = this.#windows.get(id);
    if (window === undefined || now - window.startedAt >= this.options.windowMs) {
      this.#windows.delete(id);
      if (this.#windows.size >= this.options.maxEntries) this.#forgetOldest();
      window = { startedAt: now, failures: 0 };
      this.#windows.set(id, window);
    }
    window.failures += 1;
    return window.failures === this.options.limit;
  }

  #forgetOldest(): void {
    const oldest = this.#windows.keys().next();
    if (oldest.done !== true) this.#windows.delete(oldest.value);
  }
}
