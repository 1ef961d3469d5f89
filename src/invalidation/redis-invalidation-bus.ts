import { randomBytes } from 'node:crypto';
import type { Redis } from '../redis/redis-connection.js';
import { describeError, type Logger } from '../shared/logger.js';
import { isInvalidation, LocalInvalidationBus, type Invalidation } from './invalidation-bus.js';

interface Envelope {
  origin: string;
  message: Invalidation;
}

/**
 * Invalidations over Redis pub/sub on one channel (`<REDIS_KEY_PREFIX>invalidations`). Pub/sub delivers at most
 * once, so whenever the subscriber (re)connects every cache is dropped: a message missed while disconnected cannot
 * leave a stale entry behind.
 */
export class RedisInvalidationBus extends LocalInvalidationBus {
  readonly #origin = randomBytes(8).toString('hex');
  #connectedBefore = false;
  #subscribed = false;
  readonly #onReady = (): void => {
    if (this.#connectedBefore) void this.deliver({ kind: 'all' });
    this.#connectedBefore = true;
    if (!this.#subscribed) void this.#subscribe();
  };
  readonly #onMessage = (channel: string, payload: string): void => {
    if (channel !== this.channel) return;
    let envelope: Envelope;
    try {
      envelope = JSON.parse(payload) as Envelope;
    } catch {
      return;
    }
    if (envelope.origin === this.#origin || !isInvalidation(envelope.message)) return;
    void this.deliver(envelope.message);
  };

  private constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    readonly channel: string,
    private readonly logger: Logger,
  ) {
    super();
  }

  /**
   * Subscribes before it resolves, so no change published after start is missed. When Redis cannot be reached the
   * gateway still starts (caches then expire within a second) and subscribes once Redis is back.
   */
  static async start(publisher: Redis, subscriber: Redis, channel: string, logger: Logger): Promise<RedisInvalidationBus> {
    const bus = new RedisInvalidationBus(publisher, subscriber, channel, logger);
    subscriber.on('message', bus.#onMessage);
    subscriber.on('ready', bus.#onReady);
    if (subscriber.status === 'ready') bus.#connectedBefore = true;
    await bus.#subscribe();
    return bus;
  }

  async #subscribe(): Promise<void> {
    try {
      await this.subscriber.subscribe(this.channel);
      this.#subscribed = true;
    } catch (error) {
      this.logger.warn('cannot subscribe to cache invalidations yet: caches expire within a second until Redis is back', describeError(error));
    }
  }

  override get live(): boolean {
    return this.#subscribed && this.subscriber.status === 'ready';
  }

  /** Settles once this process applied the change and Redis took the message (not when other instances applied it). */
  override async publish(message: Invalidation): Promise<void> {
    const envelope: Envelope = { origin: this.#origin, message };
    const sent = this.publisher.publish(this.channel, JSON.stringify(envelope)).then(
      () => undefined,
      (error: unknown) => {
        this.logger.warn('cache invalidation not published: other instances see the change when their cache expires', { kind: message.kind, ...describeError(error) });
      },
    );
    await Promise.all([this.deliver(message), sent]);
  }

  override async close(): Promise<void> {
    this.subscriber.off('message', this.#onMessage);
    this.subscriber.off('ready', this.#onReady);
    await this.subscriber.unsubscribe(this.channel).catch(() => undefined);
    await super.close();
  }
}
