import type { BalancingStrategy } from './balancing-strategy.js';
import type { ChannelRoute } from './catalog.js';
import type { ChannelLoad } from './channel-load.js';

/**
 * Share of least-latency requests ordered by weight alone, so a channel that answered slowly once still gets
 * an occasional first attempt and its average follows it when it becomes fast again.
 */
export const LATENCY_EXPLORATION_SHARE = 0.05;

/** What the balancing strategies read; without it every model is ordered by weight. */
export interface Balancing {
  strategy: BalancingStrategy;
  /** The public model id (latency is kept per channel-model). */
  model: string;
  load: ChannelLoad;
}

/** The strategy's figure for a route, lower first; routes the strategy cannot tell apart keep the weighted order. */
function strategyMetric(balancing: Balancing | undefined, exploring: boolean): (route: ChannelRoute) => number {
  const strategy = balancing === undefined || exploring ? 'weighted' : balancing.strategy;
  switch (strategy) {
    case 'weighted':
      return () => 0;
    case 'least-latency': {
      const { load, model } = balancing as Balancing;
      // A channel with no figure yet goes first once, to get one.
      return (route) => load.latencyMs(route.channel.id, model) ?? -1;
    }
    case 'least-in-flight': {
      const { load } = balancing as Balancing;
      return (route) => load.inFlight(route.channel.id) / Math.max(route.channel.weight, Number.MIN_VALUE);
    }
    default: {
      const unknown: never = strategy;
      throw new Error(`unknown balancing strategy ${String(unknown)}`);
    }
  }
}

/**
 * The order in which a request tries channels:
 * 1. routes the caller's provider preference ranked, in that rank (see `applyProviderPreference`);
 * 2. then higher priority first;
 * 3. within one priority, weight 0 channels last (backups of their tier);
 * 4. then the model's balancing strategy (lowest latency, fewest in flight per unit of weight);
 * 5. then a weighted random order (Efraimidis-Spirakis keys u^(1/w), compared as ln(u)/w so small weights do not
 *    underflow), so with the `weighted` strategy weight is each channel's share of first attempts.
 */
export function orderCandidates(routes: readonly ChannelRoute[], random: () => number = Math.random, balancing?: Balancing): ChannelRoute[] {
  if (routes.length <= 1) return [...routes];
  const exploring = balancing?.strategy === 'least-latency' && random() < LATENCY_EXPLORATION_SHARE;
  const metric = strategyMetric(balancing, exploring);
  return routes
    .map((route) => {
      const weight = route.channel.weight;
      return {
        route,
        rank: route.preferenceRank ?? Number.POSITIVE_INFINITY,
        backup: weight > 0 ? 0 : 1,
        metric: metric(route),
        key: weight > 0 ? Math.log(1 - random()) / weight : Number.NEGATIVE_INFINITY,
        tie: random(),
      };
    })
    .sort((left, right) => compareRank(left.rank, right.rank)
      || right.route.channel.priority - left.route.channel.priority
      || left.backup - right.backup
      || left.metric - right.metric
      || right.key - left.key
      || right.tie - left.tie)
    .map(({ route }) => route);
}

function compareRank(left: number, right: number): number {
  if (left === right) return 0;
  return left < right ? -1 : 1;
}
