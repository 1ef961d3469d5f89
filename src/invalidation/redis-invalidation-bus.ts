import { randomBytes } from 'node:crypto';
import type { Redis } from '../redis/redis-connection.js';
import { describeError, type Logger } from '../shared/logger.js';
import { isInvalidation, LocalInvalidationBus, type Invalidation } from './invalidation-bus.js';

interface Envelope {
  origin: string;
  message: Invalidation;
  /** List each receiver pushes to once it applied the change, so the publisher can wait for all of them. */
  ack?: string;
}

/** How long a publisher waits for every receiver to confirm a change before it returns anyway (by default). */
const ACK_TIMEOUT_MS = 1000;
const ACK_POLL_MS = 3;

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
    if (!isInvalidation(envelope.message)) return;
    // This process applied its own change before publishing it: it only confirms.
    const applied = envelope.origin === this.#origin ? Promise.resolve() : this.deliver(envelope.message);
    if (typeof envelope.ack === 'string' && envelope.ack.startsWith(`${this.channel}:ack:`)) void applied.then(() => this.#confirm(envelope.ack as string));
  };

  private constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    readonly channel: string,
    private readonly logger: Logger,
    private readonly ackTimeoutMs: number,
  ) {
    super();
  }

  /**
   * Subscribes before it resolves, so no change published after start is missed. When Redis cannot be reached the
   * gateway still starts (caches then expire within a second) and subscribes once Redis is back.
   */
  static async start(publisher: Redis, subscriber: Redis, channel: string, logger: Logger, ackTimeoutMs = ACK_TIMEOUT_MS): Promise<RedisInvalidationBus> {
    const bus = new RedisInvalidationBus(publisher, subscriber, channel, logger, ackTimeoutMs);
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

  /**
   * Settles once this process and every instance subscribed at the time applied the change (each confirms on a
   * list the message names), or after its confirmation timeout (a second by default) at most when one does not confirm: an admin call that
   * publishes returns with the change in effect on the whole fleet.
   */
  override async publish(message: Invalidation): Promise<void> {
    const ack = `${this.channel}:ack:${randomBytes(8).toString('hex')}`;
    const envelope: Envelope = { origin: this.#origin, message, ack };
    const sent = this.publisher.publish(this.channel, JSON.stringify(envelope)).then(
      (receivers) => this.#awaitConfirmations(ack, receivers),
      (error: unknown) => {
        this.logger.warn('cache invalidation not published: other instances see the change when their cache expires', { kind: message.kind, ...describeError(error) });
      },
    );
    await Promise.all([this.deliver(message), sent]);
  }

  async #confirm(ack: string): Promise<void> {
    try {
      await this.publisher.multi().rpush(ack, '1').pexpire(ack, this.ackTimeoutMs * 10).exec();
    } catch {
      // The publisher stops waiting after its timeout.
    }
  }

  async #awaitConfirmations(ack: string, receivers: number): Promise<void> {
    if (receivers <= 0) return;
    const deadline = performance.now() + this.ackTimeoutMs;
    try {
      while ((await this.publisher.llen(ack)) < receivers) {
        if (performance.now() > deadline) {
          this.logger.warn('cache invalidation not confirmed by every instance in time: the others see it when their cache expires', { receivers });
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, ACK_POLL_MS));
      }
    } catch {
      return;
    }
    await this.publisher.del(ack).catch(() => undefined);
  }

  override async close(): Promise<void> {
    this.subscriber.off('message', this.#onMessage);
    this.subscriber.off('ready', this.#onReady);
    await this.subscriber.unsubscribe(this.channel).catch(() => undefined);
    await super.close();
  }
}
