import type { Catalog } from '../routing/catalog.js';
import type { ChannelHealth } from '../routing/channel-health.js';
import type { Clock } from '../shared/clock.js';
import type { Logger } from '../shared/logger.js';
import { BackgroundJob } from '../shared/background-job.js';
import { forEachPooled } from '../shared/pooled.js';
import type { Channel } from '../domain/records.js';

/** One probe: a channel and the chat model it is asked for. */
export interface ProbeTarget {
  channel: Channel;
  /** The public model id (its channel-model breaker takes the verdict). */
  model: string;
  upstreamModel: string;
}

/** What a probe reports back; the verdict itself already went to the channel's breakers. */
export interface ProbeResult {
  ok: boolean;
  outcome: string;
}

export interface ChannelProbeOptions {
  /** A channel with no attempt for this long is probed; also the time between two passes. */
  intervalMs: number;
  /** Probes running at once at most. */
  concurrency: number;
}

export interface ChannelProbeDependencies {
  catalog: Catalog;
  health: ChannelHealth;
  clock: Clock;
  logger: Logger;
  /** Sends the cheap request (the admin channel test's 1-token chat) and feeds its verdict to channel health. */
  probe: (target: ProbeTarget, signal: AbortSignal) => Promise<ProbeResult>;
}

/** Price of a model as one figure for picking the cheapest to probe; unpriced counts as free. */
function priceKey(pricing: { inputPerMtokNano: bigint | null; outputPerMtokNano: bigint | null }): bigint {
  return (pricing.inputPerMtokNano ?? 0n) + (pricing.outputPerMtokNano ?? 0n);
}

/**
 * Background health probes of idle channels: every interval, each enabled channel that no request, test or probe
 * touched for a whole interval and whose breakers would admit a request gets one 1-token chat on its cheapest chat
 * model. The verdict feeds its breakers like any attempt's, so a channel that died while idle is open before a
 * caller is sent to it, and one that recovered after its cooldown closes without a caller's request. Probes bill
 * no account and write no usage row; at most `concurrency` run at once; `stop` cancels those running. The interval
 * is fixed (no idle backoff): a pass that probed nothing says nothing about the next, and a channel that dies while
 * idle must be found within one interval.
 */
export class ChannelProbes {
  readonly #job = new BackgroundJob(() => this.runOnce());
  readonly #abort = new AbortController();

  constructor(
    private readonly dependencies: ChannelProbeDependencies,
    private readonly options: ChannelProbeOptions,
  ) {}

  /** The first pass comes one interval after start: until then every channel counts as idle. */
  start(): void {
    if (this.#abort.signal.aborted) return;
    const { intervalMs } = this.options;
    this.#job.start({
      name: 'background channel probes', baseMs: intervalMs, maxMs: intervalMs, firstPassAfterMs: intervalMs,
      found: (probed) => probed > 0, logger: this.dependencies.logger,
    });
  }

  /** One pass over the idle channels; settles with how many were probed. */
  async runOnce(): Promise<number> {
    const targets = this.idleTargets();
    await forEachPooled(targets, this.options.concurrency, this.#abort.signal, async (target) => {
      const result = await this.dependencies.probe(target, this.#abort.signal);
      const fields = { channelId: target.channel.id, model: target.model, outcome: result.outcome };
      if (result.ok) this.dependencies.logger.debug('background probe passed', fields);
      else this.dependencies.logger.warn('background probe failed', fields);
    });
    return targets.length;
  }

  /** The channels to probe now: idle for an interval, nothing in flight, admitted by their breakers. */
  idleTargets(): ProbeTarget[] {
    const { catalog, health, clock } = this.dependencies;
    const now = clock.now();
    const cheapest = new Map<string, { target: ProbeTarget; price: bigint }>();
    for (const model of catalog.models()) {
      if (model.kind !== 'chat') continue;
      const price = priceKey(model.pricing);
      for (const route of catalog.routes(model.id)) {
        const known = cheapest.get(route.channel.id);
        if (known !== undefined && known.price <= price) continue;
        cheapest.set(route.channel.id, { target: { channel: route.channel, model: model.id, upstreamModel: route.upstreamModel }, price });
      }
    }
    return [...cheapest.values()]
      .map(({ target }) => target)
      .filter((target) => {
        const lastAttemptAt = health.load.lastAttemptAt(target.channel.id);
        const idle = lastAttemptAt === null || now - lastAttemptAt >= this.options.intervalMs;
        return idle && health.load.inFlight(target.channel.id) === 0 && health.isAvailable(target.channel, target.model);
      });
  }

  /** Stops scheduling and cancels the probes running; settles once they have. */
  async stop(): Promise<void> {
    this.#abort.abort(new Error('gateway stopping'));
    await this.#job.stop();
  }
}
