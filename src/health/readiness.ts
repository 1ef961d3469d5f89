import type { Storage } from '../storage/storage.js';

/** What /readyz reports: each dependency, and whether this instance takes traffic. */
export interface ReadinessReport {
  ready: boolean;
  database: 'ok' | 'unavailable';
  /**
   * Null when REDIS_URL is not set. `degraded` while Redis does not answer: the instance stays ready and enforces
   * the limits in the degraded mode (REDIS_DEGRADED_MODE); `unavailable` is not reported any more.
   */
  redis: 'ok' | 'degraded' | null;
  migrations: 'current' | 'pending' | 'unknown';
  draining: boolean;
  /** The process is shedding requests it cannot serve (it refused one within the last second). */
  overloaded: boolean;
}

export interface ReadinessOptions {
  /** A check slower than this counts as a failure. */
  timeoutMs: number;
  /** A report younger than this is reused, so probes (or a flood of them) cost at most one round trip each. */
  cacheMs: number;
}

/**
 * Whether this instance should receive traffic: its database answers, the schema holds every migration this build
 * knows, it is not draining for shutdown, and it is not shedding load. Redis is reported but does not decide: without
 * it the limits are degraded on purpose (limits/redis-rate-limiter.ts) and every instance is in the same state, so
 * steering traffic away from one would only move the load.
 */
export class Readiness {
  #draining = false;
  #overloaded: () => boolean = () => false;
  #migrationsCurrent = false;
  #last: { report: ReadinessReport; at: number } | null = null;
  #running: Promise<ReadinessReport> | null = null;

  constructor(
    private readonly storage: Pick<Storage, 'ping' | 'pendingMigrations'>,
    private readonly redisPing: (() => Promise<boolean>) | null,
    private readonly options: ReadinessOptions,
  ) {}

  /** From now on the instance reports unready (SIGTERM received), while it still answers requests. */
  startDraining(): void {
    this.#draining = true;
    this.#last = null;
  }

  get draining(): boolean {
    return this.#draining;
  }

  /** Where the overload state comes from (the API listener's admission control). */
  followOverload(overloaded: () => boolean): void {
    this.#overloaded = overloaded;
  }

  /** The dependencies' report may be up to `cacheMs` old; the overload state is always the current one. */
  async check(): Promise<ReadinessReport> {
    const report = await this.#dependencies();
    const overloaded = this.#overloaded();
    return { ...report, ready: report.ready && !overloaded, overloaded };
  }

  #dependencies(): Promise<ReadinessReport> {
    const now = performance.now();
    if (this.#last !== null && now - this.#last.at < this.options.cacheMs) return Promise.resolve(this.#last.report);
    this.#running ??= this.#probe().then((report) => {
      this.#last = { report, at: performance.now() };
      return report;
    }).finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #probe(): Promise<ReadinessReport> {
    const [databaseUp, redisUp, migrations] = await Promise.all([
      this.#within(this.storage.ping()),
      this.redisPing === null ? Promise.resolve(null) : this.#within(this.redisPing()),
      this.#migrations(),
    ]);
    const database = databaseUp ? 'ok' : 'unavailable';
    const redis = redisUp === null ? null : redisUp ? 'ok' : 'degraded';
    return {
      ready: databaseUp && migrations === 'current' && !this.#draining,
      database,
      redis,
      migrations,
      draining: this.#draining,
      overloaded: false,
    };
  }

  /** The schema only moves forward, so once current it stays current for this build. */
  async #migrations(): Promise<ReadinessReport['migrations']> {
    if (this.#migrationsCurrent) return 'current';
    try {
      const pending = await this.#withTimeout(this.storage.pendingMigrations());
      if (pending === null) return 'unknown';
      this.#migrationsCurrent = pending.length === 0;
      return this.#migrationsCurrent ? 'current' : 'pending';
    } catch {
      return 'unknown';
    }
  }

  async #within(check: Promise<boolean>): Promise<boolean> {
    try {
      return (await this.#withTimeout(check)) === true;
    } catch {
      return false;
    }
  }

  #withTimeout<T>(work: Promise<T>): Promise<T | null> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.options.timeoutMs);
    });
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }
}
