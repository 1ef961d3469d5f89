import { randomBytes } from 'node:crypto';
import { createRedisConnection, warnOfReconnects, type Redis } from '../redis/redis-connection.js';
import { describeError, type Logger } from '../shared/logger.js';
import type { BreakerChange, ChannelHealth } from './channel-health.js';

/** A day: the hash of breaker states is dropped when no breaker changed for that long. */
const STATE_TTL_MS = 86_400_000;

interface Envelope {
  origin: string;
  change: BreakerChange;
}

function isBreakerChange(value: unknown): value is BreakerChange {
  if (value === null || typeof value !== 'object') return false;
  const change = value as Record<string, unknown>;
  return typeof change.channelId === 'string'
    && (change.model === null || typeof change.model === 'string')
    && (change.state === 'open' || change.state === 'closed')
    && typeof change.openUntil === 'number'
    && typeof change.level === 'number'
    && (change.reason === null || change.reason === 'failures' || change.reason === 'retry-after');
}

function parseEnvelope(payload: string): Envelope | null {
  try {
    const parsed = JSON.parse(payload) as Partial<Envelope>;
    return typeof parsed.origin === 'string' && isBreakerChange(parsed.change) ? (parsed as Envelope) : null;
  } catch {
    return null;
  }
}

/**
 * Shares breaker decisions between instances (REDIS_URL): every open and close decided here is written to the
 * hash `<prefix>health:breakers` (the current state, read by instances that start later or reconnect) and
 * published on `<prefix>health:events` (applied by the running ones within milliseconds). Only decisions travel;
 * failure counts stay local, so Redis sees a write per state change, never per request. Half-open probing is per
 * instance: each lets at most one probe through after a shared cooldown.
 */
export class RedisHealthSync {
  readonly #origin = randomBytes(8).toString('hex');
  readonly #hashKey: string;
  readonly #channel: string;
  /** Counts breaker changes seen (messages and this instance's own); `#lastChangeAt` keeps, per breaker field, the count at its latest. */
  #changesSeen = 0;
  readonly #lastChangeAt = new Map<string, number>();
  #closed = false;

  private constructor(
    private readonly commands: Redis,
    private readonly subscriber: Redis,
    private readonly health: ChannelHealth,
    private readonly logger: Logger,
    prefix: string,
  ) {
    this.#hashKey = `${prefix}health:breakers`;
    this.#channel = `${prefix}health:events`;
  }

  /** Connects, loads the shared state and subscribes. When Redis is down the gateway still starts (health is then local). */
  static async start(url: string, prefix: string, health: ChannelHealth, logger: Logger): Promise<RedisHealthSync> {
    const commands = createRedisConnection(url, 'health');
    const subscriber = createRedisConnection(url, 'health-events');
    warnOfReconnects(logger, 'redis connection error (channel health): reconnecting', commands, subscriber);
    const sync = new RedisHealthSync(commands, subscriber, health, logger, prefix);
    subscriber.on('message', (channel: string, payload: string) => sync.#onMessage(channel, payload));
    // After a reconnect, messages may have been missed: the hash has the current state.
    subscriber.on('ready', () => void sync.#subscribeAndLoad());
    health.onChange((change) => sync.#publish(change));
    await sync.#subscribeAndLoad();
    return sync;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([quit(this.commands), quit(this.subscriber)]);
  }

  async #subscribeAndLoad(): Promise<void> {
    if (this.#closed) return;
    try {
      await this.subscriber.subscribe(this.#channel);
      await this.#load();
    } catch (error) {
      this.logger.warn('cannot read shared channel health yet; it is kept per instance until Redis is back', describeError(error));
    }
  }

  /**
   * Reads the current states. The hash and the messages come on different connections, so a message can be applied
   * before an older read's reply arrives: a breaker that changed since the read was sent (a message, or a decision of
   * this instance's own) keeps that change: it is at least as new as the read, and any later change arrives as a
   * message too.
   */
  async #load(): Promise<void> {
    const changesBeforeRead = this.#changesSeen;
    const entries = await this.commands.hgetall(this.#hashKey);
    const now = this.health.now();
    for (const [field, payload] of Object.entries(entries)) {
      const envelope = parseEnvelope(payload);
      if (envelope === null || envelope.change.openUntil < now - STATE_TTL_MS) {
        await this.commands.hdel(this.#hashKey, field);
        continue;
      }
      if ((this.#lastChangeAt.get(field) ?? 0) > changesBeforeRead) continue;
      this.health.adopt(envelope.change);
    }
  }

  #onMessage(channel: string, payload: string): void {
    if (channel !== this.#channel) return;
    const envelope = parseEnvelope(payload);
    if (envelope === null || envelope.origin === this.#origin) return;
    this.#noteChange(breakerField(envelope.change));
    this.health.adopt(envelope.change);
  }

  #noteChange(field: string): void {
    this.#changesSeen += 1;
    this.#lastChangeAt.set(field, this.#changesSeen);
  }

  #publish(change: BreakerChange): void {
    if (this.#closed) return;
    const field = breakerField(change);
    this.#noteChange(field);
    const payload = JSON.stringify({ origin: this.#origin, change } satisfies Envelope);
    const pipeline = this.commands.multi();
    if (change.state === 'open') pipeline.hset(this.#hashKey, field, payload).pexpire(this.#hashKey, STATE_TTL_MS);
    else pipeline.hdel(this.#hashKey, field);
    pipeline.publish(this.#channel, payload);
    pipeline.exec().catch((error: unknown) => {
      this.logger.warn('channel health change not shared: other instances find out by themselves', { channelId: change.channelId, ...describeError(error) });
    });
  }
}

function breakerField(change: BreakerChange): string {
  return JSON.stringify([change.channelId, change.model]);
}

async function quit(connection: Redis): Promise<void> {
  try {
    await connection.quit();
  } catch {
    connection.disconnect();
  }
}
