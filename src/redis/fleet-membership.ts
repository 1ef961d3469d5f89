import type { Logger } from '../shared/logger.js';
import { describeError } from '../shared/logger.js';
import type { Redis } from './redis-connection.js';

/** What this instance last learnt of the fleet sharing its Redis: how many instances live, and where it sorts among them. */
export interface FleetView {
  /** Live instances, this one included (at least 1). */
  size: number;
  /** This instance's position (0-based) among the live instances sorted by id. */
  rank: number;
}

export interface FleetMembershipOptions {
  /** The sorted set of live instances (`<REDIS_KEY_PREFIX>fleet:members`). */
  key: string;
  instanceId: string;
  /** How often this instance announces itself; a member silent for three heartbeats counts as gone. */
  heartbeatMs: number;
  logger: Logger;
}

/**
 * KEYS[1]: the member set. ARGV: member id, TTL ms. Drops members whose announcement expired (Redis server time),
 * announces this one, and returns every live member.
 */
const HEARTBEAT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
redis.call('PEXPIRE', KEYS[1], ttl * 2)
return redis.call('ZRANGE', KEYS[1], 0, -1)
`;

/**
 * Every instance announces itself in Redis with a heartbeat and an expiry, and keeps the membership it saw last.
 * While Redis is unreachable that last view stands: it is what each instance divides a limit by.
 */
export class FleetMembership {
  #view: FleetView = { size: 1, rank: 0 };
  #timer: NodeJS.Timeout | null = null;
  #lastFailure = 0;

  constructor(
    private readonly redis: Redis,
    private readonly options: FleetMembershipOptions,
  ) {}

  /** The fleet as of the last heartbeat that reached Redis. */
  get view(): FleetView {
    return this.#view;
  }

  /** Announces this instance once (waiting for it), then keeps announcing it in the background. */
  async start(): Promise<void> {
    await this.beat();
    this.#timer = setInterval(() => void this.beat(), this.options.heartbeatMs);
    this.#timer.unref();
  }

  /** One announcement; when Redis does not answer the last view is kept. */
  async beat(): Promise<void> {
    if (this.redis.status !== 'ready') return;
    try {
      const members = (await this.redis.eval(HEARTBEAT, 1, this.options.key, this.options.instanceId, this.options.heartbeatMs * 3)) as string[];
      const sorted = [...members].sort();
      const rank = sorted.indexOf(this.options.instanceId);
      this.#view = { size: Math.max(1, sorted.length), rank: Math.max(0, rank) };
    } catch (error) {
      if (Date.now() - this.#lastFailure < 10_000) return;
      this.#lastFailure = Date.now();
      this.options.logger.warn('fleet heartbeat failed: keeping the last known membership', describeError(error));
    }
  }

  /** Leaves the fleet at once (a clean stop), so the others stop counting this instance. */
  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    if (this.redis.status !== 'ready') return;
    await this.redis.zrem(this.options.key, this.options.instanceId).catch(() => undefined);
  }
}
