import { channelCatalog } from '../catalog/channel-catalog.js';
import type { Channel, NanoUsd } from '../storage/records.js';
import type { ChannelRoute } from './catalog.js';

/**
 * A caller's preference among the channels of the model it asked for (OpenRouter's `provider` object). Each name
 * matches a channel by its name, its type (`openai`, `azure-openai`, `bedrock`, …) or the provider of its
 * catalog (`openai`, `anthropic`, `google`, …), without regard to case, spaces counting as hyphens.
 */
export interface ProviderPreference {
  /** Channels to try first, in this order; the others follow in the gateway's own order. */
  order?: readonly string[];
  /** With `order`: false keeps only the channels `order` names. Default true. */
  allowFallbacks?: boolean;
  /** Only these channels. */
  only?: readonly string[];
  /** Never these channels. */
  ignore?: readonly string[];
  /** After `order`: cheapest first, or lowest recent time to first byte first. */
  sort?: 'price' | 'latency';
  /** Leaves out channels whose price per million tokens is above these. */
  maxPrice?: { promptPerMtokNano?: NanoUsd; completionPerMtokNano?: NanoUsd };
}

/** What a route costs the caller per million tokens; null: not charged. */
export interface RoutePrice {
  promptPerMtokNano: NanoUsd | null;
  completionPerMtokNano: NanoUsd | null;
}

/** What the preference reads about routes it sorts or filters. */
export interface PreferenceFacts {
  /** Moving average of time to first byte, null when unknown. */
  latencyMs(route: ChannelRoute): number | null;
  priceOf(route: ChannelRoute): RoutePrice;
}

/** A channel's names a preference entry may match. */
function namesOf(channel: Channel): string[] {
  const names = [normalize(channel.name), channel.type];
  const provider = channelCatalog(channel)?.provider;
  if (provider !== undefined) names.push(normalize(provider));
  return names;
}

function normalize(name: string): string {
  return name.trim().toLowerCase().replace(/\s+/g, '-');
}

/** Whether a route is named by any entry of the list. */
export function matchesAny(route: ChannelRoute, entries: readonly string[]): boolean {
  const names = namesOf(route.channel);
  return entries.some((entry) => names.includes(normalize(entry)));
}

function positionIn(route: ChannelRoute, entries: readonly string[]): number | null {
  const names = namesOf(route.channel);
  const index = entries.findIndex((entry) => names.includes(normalize(entry)));
  return index < 0 ? null : index;
}

function withinMaxPrice(price: RoutePrice, max: NonNullable<ProviderPreference['maxPrice']>): boolean {
  if (max.promptPerMtokNano !== undefined && (price.promptPerMtokNano ?? 0n) > max.promptPerMtokNano) return false;
  if (max.completionPerMtokNano !== undefined && (price.completionPerMtokNano ?? 0n) > max.completionPerMtokNano) return false;
  return true;
}

/** Price of a route as one comparable figure: prompt plus completion per million tokens. */
function priceKey(price: RoutePrice): bigint {
  return (price.promptPerMtokNano ?? 0n) + (price.completionPerMtokNano ?? 0n);
}

function withoutRank(route: ChannelRoute): ChannelRoute {
  const { preferenceRank: _rank, ...copy } = route;
  return copy;
}

interface Keyed {
  route: ChannelRoute;
  /** Position in `order`; the length of `order` for routes it does not name. */
  orderPosition: number;
  sortKey: number | bigint;
}

function compareKeys(left: Keyed, right: Keyed): number {
  if (left.orderPosition !== right.orderPosition) return left.orderPosition - right.orderPosition;
  if (left.sortKey === right.sortKey) return 0;
  return left.sortKey < right.sortKey ? -1 : 1;
}

/**
 * Narrows and orders the routes a request may take by the caller's preference: `only`, `ignore` and `maxPrice`
 * remove routes; `order` and `sort` rank what is left (`preferenceRank`, tried before the operator's priority,
 * see `orderCandidates`). Routes the preference cannot tell apart share a rank and keep the gateway's order; with
 * only `order` given, routes it does not name get no rank. Returned in rank order, the input's order otherwise;
 * routes are copied, never changed. May return none: the caller then learns that its preference matched nothing.
 */
export function applyProviderPreference(routes: readonly ChannelRoute[], preference: ProviderPreference, facts: PreferenceFacts): ChannelRoute[] {
  const { only, ignore, maxPrice, order, sort } = preference;
  let kept = routes.filter((route) => (only === undefined || matchesAny(route, only)) && (ignore === undefined || !matchesAny(route, ignore)));
  if (maxPrice !== undefined) kept = kept.filter((route) => withinMaxPrice(facts.priceOf(route), maxPrice));
  if (order !== undefined && preference.allowFallbacks === false) kept = kept.filter((route) => positionIn(route, order) !== null);
  const ranksOrder = order !== undefined && order.length > 0;
  if (!ranksOrder && sort === undefined) return kept.map(withoutRank);

  const orderLength = order?.length ?? 0;
  const keyed: Keyed[] = kept.map((route) => {
    const orderPosition = (order === undefined ? null : positionIn(route, order)) ?? orderLength;
    let sortKey: number | bigint = 0;
    if (sort === 'price') sortKey = priceKey(facts.priceOf(route));
    // Unknown latency sorts after every known figure.
    else if (sort === 'latency') sortKey = facts.latencyMs(route) ?? Number.POSITIVE_INFINITY;
    return { route, orderPosition, sortKey };
  });
  // Array.prototype.sort is stable: equal keys keep the input's order.
  keyed.sort(compareKeys);
  const ranked: ChannelRoute[] = [];
  let rank = 0;
  for (const [index, entry] of keyed.entries()) {
    if (index > 0 && compareKeys(keyed[index - 1] as Keyed, entry) !== 0) rank += 1;
    // Only `order` given: what it does not name keeps the gateway's own order, after the ranked routes.
    const unranked = sort === undefined && entry.orderPosition === orderLength;
    ranked.push(unranked ? withoutRank(entry.route) : { ...withoutRank(entry.route), preferenceRank: rank });
  }
  return ranked;
}
