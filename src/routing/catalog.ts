import { matchBundled, type BundledCatalog, type BundledModel } from '../catalog/bundled-catalog.js';
import { operatorModel, overlayOperatorModel, type CatalogModel, type ModelCapabilities } from '../catalog/catalog-model.js';
import { ALL_BUNDLED_MODELS, BUILT_IN_PROVIDERS, channelCatalog } from '../catalog/channel-catalog.js';
import type { Logger } from '../shared/logger.js';
import type { Channel } from '../domain/records.js';
import type { Model } from '../domain/model-records.js';
import type { Storage } from '../storage/storage.js';

/** What routing checks a request against on one channel: the facts of the model that channel's upstream runs. */
export interface RouteFacts {
  capabilities: ModelCapabilities | null;
  contextWindow: number | null;
}

/** A channel able to serve a model, with the name the upstream knows it by. */
export interface ChannelRoute {
  channel: Channel;
  upstreamModel: string;
  /** Absent: nothing known, nothing refused. */
  facts?: RouteFacts;
  /** Set from the caller's provider preference: ranked routes are tried first, lowest rank first, before priority. */
  preferenceRank?: number;
}

/** Ids asked for that no name or alias matched, resolved through the data's rules; bounded, cleared on reload. */
const RESOLVED_LIMIT = 1024;
/** Dated snapshot ids (`-20250929`, `-2024-08-06`, `-0613`): sent upstream as asked, since the upstream serves each. */
const DATED = /-(\d{8}|\d{4}-\d{2}-\d{2}|\d{4})$/;
/** Ids resolved through the data's rules when no name matched: full dates only, so a typo never lands on a broad rule. */
const SNAPSHOT_DATE = /-20\d{2}-?\d{2}-?\d{2}$/;

interface Snapshot {
  models: Map<string, CatalogModel>;
  /** Every name a request may use (ids and aliases) → its model. */
  names: Map<string, CatalogModel>;
  /** Routes by every name: an alias's routes send a dated snapshot id upstream as asked. */
  routes: Map<string, ChannelRoute[]>;
  /** Bundled models that have routes, for resolving ids no name matched. */
  routable: BundledModel[];
  channels: Channel[];
  /** Models each enabled channel serves, by channel id (a `*` channel serves its provider's whole catalog). */
  servedCounts: Map<string, number>;
}

function factsOf(model: CatalogModel): RouteFacts | undefined {
  return model.capabilities === null && model.contextWindow === null ? undefined : { capabilities: model.capabilities, contextWindow: model.contextWindow };
}

/** The routes for a name of `model`: default-named routes of a dated alias ask the upstream for that snapshot. */
function aliasRoutes(routes: readonly ChannelRoute[], model: CatalogModel, alias: string): ChannelRoute[] {
  if (!DATED.test(alias)) return [...routes];
  return routes.map((route) => (route.upstreamModel === (model.upstream ?? model.id) ? { ...route, upstreamModel: alias } : route));
}

/**
 * The routing snapshot: models and the enabled channels that serve each, read from storage once and rebuilt
 * after every admin change (here and, through the invalidation bus, on sibling workers and Redis-connected
 * instances; on a timer for anything else). Requests read it without I/O.
 *
 * Models come from the bundled catalog (every model of a channel's provider when the channel lists `*`, or the
 * ones it names) and from stored records; a stored record with a bundled model's id overrides its prices, kind,
 * visibility and upstream name, keeping the bundled facts. Aliases and capabilities are resolved here, once.
 */
export class Catalog {
  #snapshot: Snapshot = { models: new Map(), names: new Map(), routes: new Map(), routable: [], channels: [], servedCounts: new Map() };
  #resolved = new Map<string, { model: CatalogModel; routes: ChannelRoute[] } | null>();
  #reloading: Promise<void> | null = null;
  /** One more load queued behind the running one (whose read may predate the change its caller made). */
  #reloadAfter: Promise<void> | null = null;
  readonly #listeners: Array<(channels: readonly Channel[]) => void> = [];

  constructor(
    private readonly storage: Storage,
    private readonly logger: Logger,
    private readonly isRoutable: (channel: Channel) => boolean,
    private readonly bundled: BundledCatalog | null = null,
  ) {}

  /** The model a name (id, alias, or a dated id the bundled data's rules accept) stands for. */
  model(name: string): CatalogModel | undefined {
    return this.#snapshot.names.get(name) ?? this.#resolve(name)?.model;
  }

  /** Models by their own id (aliases not repeated). */
  models(): CatalogModel[] {
    return [...this.#snapshot.models.values()];
  }

  channels(): Channel[] {
    return this.#snapshot.channels;
  }

  /** Enabled channels serving the model by this name (unordered; the router orders them per request). */
  routes(name: string): readonly ChannelRoute[] {
    return this.#snapshot.routes.get(name) ?? this.#resolve(name)?.routes ?? [];
  }

  /** How many models the channel serves: those routed through it, or for a disabled channel the ones it names. */
  servedModelCount(channel: Channel): number {
    return this.#snapshot.servedCounts.get(channel.id) ?? Object.keys(channel.models).filter((name) => name !== ALL_BUNDLED_MODELS).length;
  }

  /**
   * The bundled data's models of each provider the gateway knows (the built-in ones and those its channels name),
   * at their list prices whether or not an operator record overrides them.
   */
  bundledByProvider(): Map<string, CatalogModel[]> {
    const providers = new Set([...BUILT_IN_PROVIDERS, ...this.#snapshot.channels.map((channel) => channelCatalog(channel)?.provider).filter((provider): provider is string => provider !== undefined)]);
    return new Map([...providers].map((provider) => [provider, (this.bundled?.provider(provider) ?? []).map((bundled) => bundled.model)]));
  }

  /** The bundled data package's version, or null without bundled data. */
  bundledVersion(): string | null {
    return this.bundled?.version ?? null;
  }

  hasRoute(modelId: string): boolean {
    return (this.#snapshot.routes.get(modelId)?.length ?? 0) > 0;
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

  /** A dated id no name matched: the first routable bundled model whose rule accepts it, or its undated form. */
  #resolve(name: string): { model: CatalogModel; routes: ChannelRoute[] } | null {
    const known = this.#resolved.get(name);
    if (known !== undefined) return known;
    const snapshot = this.#snapshot;
    let resolved: { model: CatalogModel; routes: ChannelRoute[] } | null = null;
    if (name.length <= 200 && SNAPSHOT_DATE.test(name) && snapshot.routable.length > 0) {
      const bundled = matchBundled(snapshot.routable, name);
      const model = bundled === undefined ? undefined : snapshot.models.get(bundled.model.id);
      if (model !== undefined) resolved = { model, routes: aliasRoutes(snapshot.routes.get(model.id) ?? [], model, name) };
    }
    if (this.#resolved.size >= RESOLVED_LIMIT) this.#resolved.clear();
    this.#resolved.set(name, resolved);
    return resolved;
  }

  async #load(): Promise<void> {
    const [channels, stored] = await Promise.all([this.storage.channels.listAll(), this.storage.models.listAll()]);
    const snapshot = this.#build(channels, stored);
    this.#snapshot = snapshot;
    this.#resolved = new Map();
    for (const listener of this.#listeners) listener(channels);
  }

  #build(channels: Channel[], stored: Model[]): Snapshot {
    const storedById = new Map(stored.map((model) => [model.id, model]));
    const models = new Map<string, CatalogModel>();
    const bundledById = new Map<string, BundledModel>();
    const unpriced = new Set<string>();
    /** Routes by model id; their facts are filled in once every model (and every operator override) is known. */
    const pending: Array<{ modelId: string; channel: Channel; upstreamModel: string; upstreamFacts: CatalogModel | undefined }> = [];
    /** The catalog model for a bundled one, with the operator's record over it when there is one. */
    const fromBundled = (bundled: BundledModel): CatalogModel => {
      const id = bundled.model.id;
      if (!bundledById.has(id)) {
        const override = storedById.get(id);
        models.set(id, override === undefined ? bundled.model : overlayOperatorModel(bundled.model, override));
        bundledById.set(id, bundled);
      }
      return models.get(id) as CatalogModel;
    };
    for (const model of stored) if (!models.has(model.id)) models.set(model.id, operatorModel(model));

    for (const channel of channels) {
      const routable = this.isRoutable(channel);
      const catalog = this.bundled === null ? null : channelCatalog(channel);
      const offered = catalog === null || this.bundled === null ? [] : this.bundled.provider(catalog.provider).filter((bundled) => catalog.serves(bundled.model.id));
      const serve = (model: CatalogModel, upstreamName: string): void => {
        if (!channel.enabled || !routable) return;
        const upstreamModel = upstreamName === '' ? (model.upstream ?? model.id) : upstreamName;
        const upstreamFacts = upstreamModel === model.id ? undefined : offered.find((bundled) => bundled.model.id === upstreamModel)?.model;
        pending.push({ modelId: model.id, channel, upstreamModel, upstreamFacts });
      };
      for (const [publicId, upstreamName] of Object.entries(channel.models)) {
        if (publicId === ALL_BUNDLED_MODELS) {
          for (const bundled of offered) serve(fromBundled(bundled), '');
          continue;
        }
        const storedModel = storedById.get(publicId);
        const bundled = offered.find((entry) => entry.model.id === publicId || entry.model.aliases.includes(publicId))
          ?? (storedModel === undefined && SNAPSHOT_DATE.test(publicId) ? matchBundled(offered, publicId) : undefined);
        if (bundled !== undefined && (storedModel === undefined || bundled.model.id === publicId)) {
          serve(fromBundled(bundled), upstreamName === '' && bundled.model.id !== publicId ? publicId : upstreamName);
          continue;
        }
        const model = models.get(publicId);
        if (model === undefined) {
          unpriced.add(publicId);
          continue;
        }
        serve(model, upstreamName);
      }
    }
    const routeLists = new Map<string, ChannelRoute[]>();
    const servedCounts = new Map<string, number>();
    for (const { modelId, channel, upstreamModel, upstreamFacts } of pending) {
      servedCounts.set(channel.id, (servedCounts.get(channel.id) ?? 0) + 1);
      const facts = factsOf(upstreamFacts ?? (models.get(modelId) as CatalogModel));
      const list = routeLists.get(modelId) ?? [];
      list.push(facts === undefined ? { channel, upstreamModel } : { channel, upstreamModel, facts });
      routeLists.set(modelId, list);
    }
    if (unpriced.size > 0) {
      this.logger.warn('channels list models that have no model record (and so no price); they are not routable', { models: [...unpriced] });
    }

    const names = new Map<string, CatalogModel>();
    const routes = new Map<string, ChannelRoute[]>();
    for (const model of models.values()) {
      names.set(model.id, model);
      const list = routeLists.get(model.id);
      if (list !== undefined) routes.set(model.id, list);
    }
    for (const model of models.values()) {
      for (const alias of model.aliases) {
        if (names.has(alias)) continue;
        names.set(alias, model);
        const list = routeLists.get(model.id);
        if (list !== undefined) routes.set(alias, aliasRoutes(list, model, alias));
      }
    }
    const routable = [...bundledById.values()].filter((bundled) => routeLists.has(bundled.model.id));
    return { models, names, routes, routable, channels, servedCounts };
  }
}
