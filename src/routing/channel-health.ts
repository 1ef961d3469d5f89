import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import type { Channel } from '../domain/records.js';
import { ChannelLoad } from './channel-load.js';
import { CircuitBreaker, type Admission, type BreakerPolicy, type BreakerSnapshot, type BreakerState, type OpenReason } from './circuit-breaker.js';
import { failureScope, type AttemptFailure } from './failure-class.js';

/** A breaker that opened or closed here, for other instances (Redis) and the logs. */
export interface BreakerChange {
  channelId: string;
  /** null: the channel's own breaker; otherwise the public model id of a channel-model breaker. */
  model: string | null;
  state: 'open' | 'closed';
  openUntil: number;
  level: number;
  reason: OpenReason | null;
}

export type ChannelStatus = 'operational' | 'degraded' | 'down';

interface ChannelEntry {
  name: string;
  updatedAt: number;
  breaker: CircuitBreaker;
  models: Map<string, CircuitBreaker>;
}

/** How an attempt got past one breaker: normally, as the half-open probe, or forced (every candidate was open). */
type Passage = 'pass' | 'probe' | 'forced';

/**
 * One attempt's pass through a channel breaker and a channel-model breaker. Exactly one of `succeeded`,
 * `failed` or `release` takes effect; the rest are ignored, so a relay can call `release` in a `finally`.
 * From its creation to that verdict the attempt counts as in flight on its channel; its time to first byte
 * (`answered`, else the success itself) feeds the channel-model's latency average.
 */
export class AttemptTicket {
  #settled = false;
  #timed = false;
  readonly #startedAt: number;

  constructor(
    private readonly health: ChannelHealth,
    readonly channelId: string,
    readonly model: string,
    private readonly channel: CircuitBreaker,
    private readonly channelPassage: Passage,
    private readonly modelBreaker: CircuitBreaker,
    private readonly modelPassage: Passage,
  ) {
    this.#startedAt = health.now();
    health.load.started(channelId, this.#startedAt);
  }

  /** The upstream's answer began (its response head): the time to first byte is taken now. */
  answered(): void {
    if (this.#settled) return;
    this.#recordLatency();
  }

  /** The attempt went through while every candidate was open. */
  get forced(): boolean {
    return this.channelPassage === 'forced' || this.modelPassage === 'forced';
  }

  succeeded(): void {
    if (!this.#take()) return;
    this.#recordLatency();
    if (this.channelPassage === 'pass' && this.modelPassage === 'pass') {
      // A success admitted by a plain pass only counts: it moves no breaker's state or cooldown (whatever either
      // breaker became meanwhile), so there is no open or close to look for and announce.
      const now = this.health.now();
      this.channel.recordSuccess(now, false);
      this.modelBreaker.recordSuccess(now, false);
      return;
    }
    this.health.observe(this.channelId, this.model, () => {
      const now = this.health.now();
      this.channel.recordSuccess(now, this.channelPassage !== 'pass');
      this.modelBreaker.recordSuccess(now, this.modelPassage !== 'pass');
    });
  }

  failed(failure: AttemptFailure): void {
    if (!this.#take()) return;
    // A channel that let the first-byte deadline pass is at least that slow.
    if (failure.failureClass === 'first_byte_timeout') this.#recordLatency();
    this.health.observe(this.channelId, this.model, () => {
      const now = this.health.now();
      if (failureScope(failure.failureClass) === 'channel') {
        this.channel.recordFailure(now, failure.failureClass, this.channelPassage === 'probe');
        if (this.modelPassage === 'probe') this.modelBreaker.releaseProbe();
        return;
      }
      // The host answered: the channel is reachable, the answer is the channel-model's failure.
      this.channel.recordSuccess(now, this.channelPassage !== 'pass', false);
      this.modelBreaker.recordFailure(now, failure.failureClass, this.modelPassage === 'probe', failure.retryAfterMs);
    });
  }

  /** No verdict on the channel (the caller left, or its own request was refused): frees a probe slot. */
  release(): void {
    if (!this.#take()) return;
    if (this.channelPassage === 'probe') this.channel.releaseProbe();
    if (this.modelPassage === 'probe') this.modelBreaker.releaseProbe();
  }

  #take(): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.health.load.ended(this.channelId);
    return true;
  }

  #recordLatency(): void {
    if (this.#timed) return;
    this.#timed = true;
    this.health.load.recordFirstByte(this.channelId, this.model, this.health.now() - this.#startedAt);
  }
}

export interface HealthReport {
  channelId: string;
  name: string;
  channel: BreakerSnapshot;
  models: Array<{ model: string } & BreakerSnapshot>;
}

/**
 * Passive health of every channel and channel-model, fed by relay outcomes through AttemptTickets: a circuit
 * breaker per channel (reachability, keys, account) and per channel-model (answers). In memory; with REDIS_URL
 * every open/close is also shared (RedisHealthSync) so all instances skip the same channels.
 */
export class ChannelHealth {
  /** In-flight attempts and latency, for the balancing strategies and the background probes. */
  readonly load = new ChannelLoad();
  readonly #channels = new Map<string, ChannelEntry>();
  readonly #listeners: Array<(change: BreakerChange) => void> = [];

  constructor(
    private readonly policy: BreakerPolicy,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  now(): number {
    return this.clock.now();
  }

  /** Called for every open and close decided in this process. */
  onChange(listener: (change: BreakerChange) => void): void {
    this.#listeners.push(listener);
  }

  /** Whether a request would be admitted now, without taking a probe slot (for ordering and status). */
  isAvailable(channel: Channel, model: string): boolean {
    const entry = this.#channels.get(channel.id);
    if (entry === undefined) return true;
    const now = this.clock.now();
    return entry.breaker.isAvailable(now) && (entry.models.get(model)?.isAvailable(now) ?? true);
  }

  /** Admits an attempt through both breakers, or null when either refuses (open, or its probe is taken). */
  acquire(channel: Channel, model: string): AttemptTicket | null {
    const entry = this.#entry(channel);
    const modelBreaker = this.#modelBreaker(entry, model);
    const now = this.clock.now();
    const channelAdmission = this.#admit(channel.id, null, entry.breaker, now);
    if (channelAdmission === null) return null;
    const modelAdmission = this.#admit(channel.id, model, modelBreaker, now);
    if (modelAdmission === null) {
      if (channelAdmission === 'probe') entry.breaker.releaseProbe();
      return null;
    }
    return new AttemptTicket(this, channel.id, model, entry.breaker, channelAdmission, modelBreaker, modelAdmission);
  }

  /** Admits an attempt even through open breakers: used when every candidate is open, rather than failing at once. */
  force(channel: Channel, model: string): AttemptTicket {
    const entry = this.#entry(channel);
    const modelBreaker = this.#modelBreaker(entry, model);
    const now = this.clock.now();
    const channelPassage: Passage = this.#admit(channel.id, null, entry.breaker, now) ?? 'forced';
    const modelPassage: Passage = this.#admit(channel.id, model, modelBreaker, now) ?? 'forced';
    return new AttemptTicket(this, channel.id, model, entry.breaker, channelPassage, modelBreaker, modelPassage);
  }

  /** When the channel-model last failed (either breaker), for "least recently failed"; 0 when never. */
  lastFailureAt(channel: Channel, model: string): number {
    const entry = this.#channels.get(channel.id);
    if (entry === undefined) return 0;
    return Math.max(entry.breaker.lastFailureAt ?? 0, entry.models.get(model)?.lastFailureAt ?? 0);
  }

  /** Runs a breaker mutation and reports the opens and closes it caused. */
  observe(channelId: string, model: string, mutate: () => void): void {
    const entry = this.#channels.get(channelId);
    if (entry === undefined) return;
    const modelBreaker = entry.models.get(model);
    const channelState = entry.breaker.state;
    const channelOpenUntil = entry.breaker.openUntil;
    const modelState = modelBreaker?.state ?? 'closed';
    const modelOpenUntil = modelBreaker?.openUntil ?? 0;
    mutate();
    this.#emitIfChanged(channelId, null, entry.breaker, channelState, channelOpenUntil);
    if (modelBreaker !== undefined) this.#emitIfChanged(channelId, model, modelBreaker, modelState, modelOpenUntil);
  }

  /** A state decided by another instance. Never re-announced. */
  adopt(change: BreakerChange): void {
    const entry = this.#channels.get(change.channelId);
    if (entry === undefined && change.state === 'closed') return;
    const target = entry ?? this.#placeholder(change.channelId);
    const breaker = change.model === null ? target.breaker : this.#modelBreaker(target, change.model);
    breaker.adopt(change.state, change.openUntil, change.level, change.reason);
  }

  /**
   * Follows the routing snapshot: forgets deleted channels and gives a channel an admin changed a fresh start
   * (a fixed base URL or key should get traffic at once).
   */
  syncChannels(channels: readonly Channel[]): void {
    const byId = new Map(channels.map((channel) => [channel.id, channel]));
    for (const [id, entry] of this.#channels) {
      const channel = byId.get(id);
      if (channel === undefined) {
        this.#channels.delete(id);
        this.load.forget(id);
      } else if (entry.updatedAt !== 0 && entry.updatedAt !== channel.updatedAt) this.reset(id);
      else {
        entry.updatedAt = channel.updatedAt;
        entry.name = channel.name;
      }
    }
  }

  /** Forgets everything known about a channel (admin reset). */
  reset(channelId: string): void {
    this.load.forget(channelId);
    const entry = this.#channels.get(channelId);
    if (entry === undefined) return;
    this.#channels.delete(channelId);
    const closed = (model: string | null): void => this.#emit({ channelId, model, state: 'closed', openUntil: 0, level: 0, reason: null });
    if (entry.breaker.state !== 'closed') closed(null);
    for (const [model, breaker] of entry.models) if (breaker.state !== 'closed') closed(model);
  }

  report(channel: Channel): HealthReport {
    const now = this.clock.now();
    const entry = this.#channels.get(channel.id);
    const fresh = new CircuitBreaker(this.policy).snapshot(now);
    const models = Object.keys(channel.models).map((model) => ({ model, ...(entry?.models.get(model)?.snapshot(now) ?? fresh) }));
    return { channelId: channel.id, name: channel.name, channel: entry?.breaker.snapshot(now) ?? fresh, models };
  }

  /**
   * operational: nothing wrong lately; degraded: a channel-model breaker is not closed or the last outcome somewhere
   * on the channel failed; down: the channel's breaker is not closed, or none of its models is available.
   */
  status(channel: Channel): ChannelStatus {
    const entry = this.#channels.get(channel.id);
    if (entry === undefined) return 'operational';
    const now = this.clock.now();
    if (entry.breaker.state !== 'closed') return 'down';
    const models = Object.keys(channel.models);
    let available = 0;
    let troubled = entry.breaker.consecutiveFailures > 0;
    for (const model of models) {
      const breaker = entry.models.get(model);
      if (breaker === undefined) {
        available += 1;
        continue;
      }
      if (breaker.state === 'closed' || breaker.isAvailable(now)) available += 1;
      if (breaker.state !== 'closed' || breaker.consecutiveFailures > 0) troubled = true;
    }
    if (models.length > 0 && available === 0) return 'down';
    return troubled ? 'degraded' : 'operational';
  }

  /** Every breaker's state, for the breaker_state gauge. */
  *states(): Generator<{ channel: string; model: string; state: BreakerState }> {
    const now = this.clock.now();
    for (const entry of this.#channels.values()) {
      yield { channel: entry.name, model: '', state: entry.breaker.snapshot(now).state };
      for (const [model, breaker] of entry.models) yield { channel: entry.name, model, state: breaker.snapshot(now).state };
    }
  }

  #entry(channel: Channel): ChannelEntry {
    let entry = this.#channels.get(channel.id);
    if (entry === undefined) {
      entry = { name: channel.name, updatedAt: channel.updatedAt, breaker: new CircuitBreaker(this.policy), models: new Map() };
      this.#channels.set(channel.id, entry);
    } else if (entry.updatedAt === 0) {
      entry.updatedAt = channel.updatedAt;
      entry.name = channel.name;
    }
    return entry;
  }

  /** An entry for a channel this instance has not routed to yet, known only from another instance. */
  #placeholder(channelId: string): ChannelEntry {
    const entry: ChannelEntry = { name: channelId, updatedAt: 0, breaker: new CircuitBreaker(this.policy), models: new Map() };
    this.#channels.set(channelId, entry);
    return entry;
  }

  #modelBreaker(entry: ChannelEntry, model: string): CircuitBreaker {
    let breaker = entry.models.get(model);
    if (breaker === undefined) entry.models.set(model, (breaker = new CircuitBreaker(this.policy)));
    return breaker;
  }

  /** Admission through one breaker; moving from open to half-open is not a change worth announcing. */
  #admit(channelId: string, model: string | null, breaker: CircuitBreaker, now: number): Admission {
    if (breaker.state === 'closed') return 'pass';
    const admission = breaker.admit(now);
    if (admission === 'probe') this.logger.info('circuit breaker half-open: sending a probe', { channelId, model });
    return admission;
  }

  #emitIfChanged(channelId: string, model: string | null, breaker: CircuitBreaker, stateBefore: BreakerState, openUntilBefore: number): void {
    const state = breaker.state;
    if (state === stateBefore && breaker.openUntil === openUntilBefore) return;
    if (state === 'open') {
      const snapshot = breaker.snapshot(this.clock.now());
      this.#emit({ channelId, model, state: 'open', openUntil: breaker.openUntil, level: snapshot.level, reason: snapshot.openReason });
    } else if (state === 'closed') {
      this.#emit({ channelId, model, state: 'closed', openUntil: 0, level: 0, reason: null });
    }
  }

  #emit(change: BreakerChange): void {
    if (change.state === 'open') {
      this.logger.warn('circuit breaker opened', { channelId: change.channelId, model: change.model, reason: change.reason, cooldownMs: Math.max(0, change.openUntil - this.clock.now()) });
    } else {
      this.logger.info('circuit breaker closed', { channelId: change.channelId, model: change.model });
    }
    for (const listener of this.#listeners) listener(change);
  }
}
