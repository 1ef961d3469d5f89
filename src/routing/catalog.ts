import type { Logger } from '../shared/logger.js';
import type { Channel, Model } from '../storage/records.js';
import type { Storage } from '../storage/storage.js';

/** A channel able to serve a model, with the name the upstream knows it by. */
export interface ChannelRoute {
  channel: Channel;
  upstreamModel: string;
}

/**
 * The routing snapshot: models and the enabled channels that serve each, read from storage once and rebuilt
 * after every admin change (here and, through the invalidation bus, on sibling workers and Redis-connected
 * instances; on a timer for anything else). Requests read it without I/O.
 */
export class Catalog {
  #models = new Map<string, Model>();
  #routes = new Map<string, ChannelRoute[]>();
  #channels: Channel[] = [];
  #reloading: Promise<void> | null = null;
  /** One more load queued behind the running one (whose read may predate the change its caller made). */
  #reloadAfter: Promise<void> | null = null;
  readonly #listeners: Array<(channels: readonly Channel[]) => void> = [];

  constructor(
    private readonly storage: Storage,
    private readonly logger: Logger,
    private readonly isRoutable: (channel: Channel) => boolean,
  ) {}

  model(id: string): Model | undefined {
    return this.#models.get(id);
  }

  models(): Model[] {
    return [...this.#models.values()];
  }

  channels(): Channel[] {
    return this.#channels;
  }

  /** Enabled channels serving the model (unordered; the router orders them per request). */
  routes(modelId: string): readonly ChannelRoute[] {
    return this.#routes.get(modelId) ?? [];
  }

  hasRoute(modelId: string): boolean {
    return (this.#routes.get(modelId)?.length ?? 0) > 0;
  }

  /** Called after every reload with all channels (health follows deleted and changed channels this way). */
  onReload(listener: (channels: readonly Channel[]) => void): void {
    this.#listeners.push(listener);
  }

  /**
   * Re-reads channels and models; settles once the snapshot reflects everything written before the call. A call
   * while a load runs queues one more load after it (shared by every such call) rather than joining it.
   */
  reload(): Promise<void> {
    if (this.#reloading === null) {
      this.#reloading = this.#load().finally(() => {
        this.#reloading = null;
      });
      return this.#reloading;
    }
    this.#reloadAfter ??= this.#reloading
      .catch(() => undefined)
      .then(() => {
        this.#reloadAfter = null;
        return this.reload();
      });
    return this.#reloadAfter;
  }

  async #load(): Promise<void> {
    const [channels, models] = await Promise.all([this.storage.channels.listAll(), this.storage.models.listAll()]);
    const modelsById = new Map(models.map((model) => [model.id, model]));
    const routes = new Map<string, ChannelRoute[]>();
    const unpriced = new Set<string>();
    for (const channel of channels) {
      if (!channel.enabled || !this.isRoutable(channel)) continue;
      for (const [publicId, upstreamName] of Object.entries(channel.models)) {
        const model = modelsById.get(publicId);
        if (model === undefined) {
          unpriced.add(publicId);
          continue;
        }
        const list = routes.get(publicId) ?? [];
        list.push({ channel, upstreamModel: upstreamName === '' ? (model.upstream ?? publicId) : upstreamName });
        routes.set(publicId, list);
      }
    }
    if (unpriced.size > 0) {
      this.logger.warn('channels list models that have no model record (and so no price); they are not routable', { models: [...unpriced] });
    }
    this.#models = modelsById;
    this.#routes = routes;
    this.#channels = channels;
    for (const listener of this.#listeners) listener(channels);
  }
}
