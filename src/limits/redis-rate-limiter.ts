import { randomBytes } from 'node:crypto';
import type { FleetView } from '../redis/fleet-membership.js';
import type { Redis } from '../redis/redis-connection.js';
import type { Logger } from '../shared/logger.js';
import { DegradedLimits, type RedisDegradedMode } from './degraded-limits.js';
import { decide, windowStart } from './fixed-window.js';
import type { AdmissionAsk, AdmissionDecision, ConcurrencyLease, ConcurrencySlot, LimitDecision, LimitRule, RateLimiter } from './rate-limiter.js';
import { ADMIT, RENEW, SETTLE } from './redis-lua.js';
import { RedisScript } from './redis-script.js';

export interface RedisRateLimiterOptions {
  /** Prefix of every key (REDIS_KEY_PREFIX), so several gateways or test runs can share one Redis. */
  keyPrefix: string;
  /** How long a concurrency lease lives without renewal; held leases are renewed every third of it. */
  leaseTtlMs: number;
  logger: Logger;
  /**
   * What happens while Redis cannot be reached (REDIS_DEGRADED_MODE): `share` enforces this instance's share of
   * every limit in process, `deny` refuses every limited request with 503 and Retry-After.
   */
  degradedMode?: RedisDegradedMode;
  /** The fleet as last seen in Redis, whose size divides every limit in `share` mode; one instance when absent. */
  fleet?: () => FleetView;
}

export type { RedisDegradedMode } from './degraded-limits.js';

/** A window counter outlives its window by this much, so late corrections and clock skew between instances still land. */
const COUNTER_GRACE_MS = 5000;
/** Leases renewed, or corrections and releases settled, per script call. */
const SCRIPT_BATCH = 500;

const admitScript = new RedisScript(ADMIT);
const settleScript = new RedisScript(SETTLE);
const renewScript = new RedisScript(RENEW);

/** One slot held: lease id `id` in the lease set `key`; `urgent`: its release goes out as soon as the task ends. */
interface HeldLease {
  key: string;
  id: string;
  urgent: boolean;
}

/**
 * A slot's release may wait for the end of the event-loop turn, to go out with the turn's other releases and
 * corrections in one script call, when the slot was at most a quarter full with this lease: for the wait (at most
 * one turn) to make another instance refuse a request, the other three quarters would have to fill meanwhile.
 * Releases of fuller slots, and of every slot of a limit below 4, go out as soon as the current task ends.
 */
function releaseCanWait(heldBefore: number, limit: number): boolean {
  return (heldBefore + 1) * 4 <= limit;
}

/**
 * Counter corrections and lease releases that go out together, in one script: once the current task ends when an
 * urgent release is in it, otherwise once the event-loop turn does.
 */
interface Outbox {
  counters: string[];
  deltas: number[];
  leaseSets: string[];
  leaseIds: string[];
  /** Settles once the outbox was sent (or sending it failed and was logged). */
  sent: Promise<void>;
  /** Sends the outbox now, if it has not gone yet. */
  dispatch: () => void;
  /** An urgent release is in it: it goes once the current task ends. */
  releasing: boolean;
}

type Charge = { rule: LimitRule; cost: number };

/** What the admission script answers for one admission (see ADMIT). */
type AdmitReply = Array<number | string>;

/** The admissions asked during this event-loop turn, sent as one script call when the turn's I/O is done. */
interface PendingAdmissions {
  keys: string[];
  args: Array<string | number>;
  waiters: Array<{ resolve: (reply: AdmitReply) => void; reject: (error: unknown) => void }>;
}

/** At most this many admissions go in one script call (a burst larger than this is several calls). */
const ADMISSION_BATCH = 64;

/**
 * Limits shared by every instance on one Redis: each decision is made inside one Lua script, so two instances admit
 * exactly the limit between them; a request's admission (every slot and every window) is decided at once, and the
 * admissions of one event-loop turn go to Redis as one script call. Windows are the
 * same epoch-aligned fixed windows as in process, keyed by window start. Corrections and releases are not waited
 * for: those of one event-loop turn go out together in one script call, except that the release of a slot that was
 * more than a quarter full goes out as soon as its task ends, with what that task gathered (see `releaseCanWait`).
 *
 * While Redis is unreachable the limiter is degraded, on purpose and in one of two ways: in `share` mode each
 * instance enforces, in process, its share of every limit (the limit divided by the live instances it last saw in
 * Redis), so the fleet together still admits at most the limit; in `deny` mode every limited request is refused
 * with 503 and Retry-After. It logs when it degrades and when Redis is back.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #held = new Set<HeldLease>();
  readonly #instance = randomBytes(6).toString('hex');
  #sequence = 0;
  readonly #renewal: NodeJS.Timeout;
  #closed = false;
  #outbox: Outbox | null = null;
  /** The connection's socket while it gathers this turn's writes into one (see `#gatherWrites`). */
  #corked: Redis['stream'] | null = null;
  #admissions: PendingAdmissions | null = null;

  readonly #degraded: DegradedLimits;

  constructor(
    private readonly redis: Redis,
    private readonly options: RedisRateLimiterOptions,
  ) {
    this.#degraded = new DegradedLimits(options);
    this.#renewal = setInterval(() => void this.#renew(), Math.max(100, Math.floor(options.leaseTtlMs / 3)));
    this.#renewal.unref();
    redis.on('ready', this.#onReady);
  }

  readonly #onReady = (): void => this.#degraded.recovered();

  async consume(requests: ReadonlyArray<Charge>, now: number): Promise<LimitDecision> {
    const decision = await this.admit({ slots: [], charges: requests }, now);
    if (decision.allowed) return { allowed: true, states: decision.states };
    if (decision.slot !== null) throw new Error('a request without slots was refused for one');
    return decision;
  }

  async admit(ask: AdmissionAsk, now: number): Promise<AdmissionDecision> {
    // Counters are integers: a fractional cost is charged as the next whole unit, here and in the script alike.
    const charges = ask.charges.map(({ rule, cost }) => ({ rule, cost: Math.ceil(cost) }));
    if (!this.#available()) return this.#degraded.admit(ask.slots, charges, now, null);
    this.#sequence += 1;
    const leaseId = `${this.#instance}:${this.#sequence.toString(36)}`;
    const pending = this.#pendingAdmissions();
    const { keys, args } = pending;
    const firstKey = keys.length;
    args.push(ask.slots.length, charges.length, leaseId);
    for (const slot of ask.slots) {
      keys.push(this.#leaseSetKey(slot.id));
      args.push(slot.limit);
    }
    for (const { rule, cost } of charges) {
      const start = windowStart(rule, now);
      keys.push(this.#counterKey(rule, start));
      args.push(rule.limit, cost, start + rule.windowMs - now + COUNTER_GRACE_MS);
    }
    const replied = new Promise<AdmitReply>((resolve, reject) => pending.waiters.push({ resolve, reject }));
    if (pending.waiters.length >= ADMISSION_BATCH) this.#sendAdmissions();
    let reply: AdmitReply;
    try {
      reply = await replied;
    } catch (error) {
      return this.#degraded.admit(ask.slots, charges, now, error);
    }
    this.#degraded.recovered();
    const fullSlot = Number(reply[0]);
    if (fullSlot > 0) return { allowed: false, slot: ask.slots[fullSlot - 1] as ConcurrencySlot };
    // The script decided atomically; the same rule applied to the counts it saw (before this request) gives the
    // same answer and the remaining/reset figures of every dimension.
    const decision = decide(charges, reply.slice(1, 1 + charges.length).map(Number), now);
    if (!decision.allowed) return { ...decision, slot: null };
    const heldBefore = 1 + charges.length;
    const lease = ask.slots.length === 0 ? null : this.#hold(ask.slots.map((slot, index) => ({
      key: keys[firstKey + index] as string,
      id: leaseId,
      urgent: !releaseCanWait(Number(reply[heldBefore + index]), slot.limit),
    })));
    return { allowed: true, states: decision.states, lease };
  }

  async adjust(rule: LimitRule, delta: number, chargedAt: number): Promise<void> {
    const rounded = Math.trunc(delta);
    if (rounded === 0) return;
    if (!this.#available()) {
      this.#degraded.adjust(rule, rounded, chargedAt);
      return;
    }
    const outbox = this.#outboxNow();
    outbox.counters.push(this.#counterKey(rule, windowStart(rule, chargedAt)));
    outbox.deltas.push(rounded);
    await outbox.sent;
  }

  /** True while Redis cannot be reached and the limits are enforced in the degraded mode. */
  get degraded(): boolean {
    return !this.#available();
  }

  /** Leases this instance holds now. */
  get heldLeases(): number {
    return this.#held.size;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#renewal);
    this.redis.off('ready', this.#onReady);
    for (const lease of this.#held) this.#release(lease);
    this.#held.clear();
    await this.#outbox?.sent;
    await this.#degraded.close();
  }

  /** One lease over the slots the script took; releasing it sends their removal with the next outbox. */
  #hold(leases: HeldLease[]): ConcurrencyLease {
    for (const lease of leases) this.#held.add(lease);
    return {
      release: () => {
        for (const lease of leases) if (this.#held.delete(lease)) this.#release(lease);
      },
    };
  }

  #release(lease: HeldLease): void {
    const outbox = this.#outboxNow();
    outbox.leaseSets.push(lease.key);
    outbox.leaseIds.push(lease.id);
    // A freed slot near its limit must reach Redis before its caller, who has its answer, can ask another instance
    // for it: the release goes out as soon as the current task ends (microseconds after the answer was written),
    // not at the end of the event-loop turn, which under load can be milliseconds later.
    if (lease.urgent && !outbox.releasing) {
      outbox.releasing = true;
      queueMicrotask(outbox.dispatch);
    }
  }

  /** The outbox of this event-loop turn, sent when the turn ends (or sooner, for a release). */
  #outboxNow(): Outbox {
    if (this.#outbox !== null) return this.#outbox;
    let dispatched = false;
    const outbox: Outbox = { counters: [], deltas: [], leaseSets: [], leaseIds: [], sent: Promise.resolve(), dispatch: () => {}, releasing: false };
    outbox.sent = new Promise((resolve) => {
      outbox.dispatch = () => {
        if (dispatched) return;
        dispatched = true;
        if (this.#outbox === outbox) this.#outbox = null;
        void this.#send(outbox).then(resolve);
      };
      setImmediate(outbox.dispatch);
    });
    this.#outbox = outbox;
    return outbox;
  }

  /**
   * Admissions asked during one event-loop turn go out as one script call, in one write, when the turn's I/O
   * callbacks are done: a command written on its own costs a system call, which on a busy machine costs more than
   * the command, and a script call costs Redis more than the few commands it runs. No reply could be read before
   * then anyway; what is given up is Redis working on the first ones while the rest of the turn runs. A release
   * written meanwhile sends them at once.
   */
  #pendingAdmissions(): PendingAdmissions {
    if (this.#admissions !== null) return this.#admissions;
    this.#gatherWrites();
    return (this.#admissions = { keys: [], args: [], waiters: [] });
  }

  #sendAdmissions(): void {
    const pending = this.#admissions;
    if (pending === null) return;
    this.#admissions = null;
    const { waiters } = pending;
    admitScript.run(this.redis, pending.keys, [this.options.leaseTtlMs, waiters.length, ...pending.args]).then(
      (replies) => {
        for (const [index, waiter] of waiters.entries()) {
          const reply = (replies as AdmitReply[] | null)?.[index];
          if (Array.isArray(reply)) waiter.resolve(reply);
          else waiter.reject(new Error('admission script answered without this admission'));
        }
      },
      (error: unknown) => {
        for (const waiter of waiters) waiter.reject(error);
      },
    );
  }

  #gatherWrites(): void {
    if (this.#corked !== null) return;
    const stream = this.redis.stream;
    stream.cork();
    this.#corked = stream;
    setImmediate(this.#flushWrites);
  }

  readonly #flushWrites = (): void => {
    this.#sendAdmissions();
    const stream = this.#corked;
    if (stream === null) return;
    this.#corked = null;
    stream.uncork();
  };

  /** Corrections first, then releases, at most SCRIPT_BATCH keys per script call. Lost releases expire with their TTL. */
  async #send(outbox: Outbox): Promise<void> {
    let counter = 0;
    let lease = 0;
    while (counter < outbox.counters.length || lease < outbox.leaseSets.length) {
      const counters = Math.min(SCRIPT_BATCH, outbox.counters.length - counter);
      const leases = Math.min(SCRIPT_BATCH - counters, outbox.leaseSets.length - lease);
      const keys = [...outbox.counters.slice(counter, counter + counters), ...outbox.leaseSets.slice(lease, lease + leases)];
      const args = [counters, ...outbox.deltas.slice(counter, counter + counters), ...outbox.leaseIds.slice(lease, lease + leases)];
      counter += counters;
      lease += leases;
      try {
        const sent = settleScript.run(this.redis, keys, args);
        this.#flushWrites();
        await sent;
      } catch (error) {
        this.#degraded.warn('settle', error);
      }
    }
  }

  #leaseSetKey(id: string): string {
    return `${this.options.keyPrefix}cc:${id}`;
  }

  #counterKey(rule: LimitRule, start: number): string {
    return `${this.options.keyPrefix}rl:${rule.id}:${start}`;
  }

  #available(): boolean {
    return this.redis.status === 'ready';
  }

  /** Pushes out the expiry of every lease still held, so a live stream keeps its slot and a dead process loses its own. */
  async #renew(): Promise<void> {
    if (this.#held.size === 0 || !this.#available()) return;
    const leases = [...this.#held];
    for (let offset = 0; offset < leases.length; offset += SCRIPT_BATCH) {
      const batch = leases.slice(offset, offset + SCRIPT_BATCH).filter((lease) => this.#held.has(lease));
      if (batch.length === 0) continue;
      try {
        await renewScript.run(this.redis, batch.map((lease) => lease.key), [this.options.leaseTtlMs, ...batch.map((lease) => lease.id)]);
      } catch (error) {
        this.#degraded.warn('renew', error);
        return;
      }
      // A lease released while the renewal was on its way was put back: take it out again.
      for (const lease of batch) if (!this.#held.has(lease)) this.#release(lease);
    }
  }
}
