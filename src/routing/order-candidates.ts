import type { ChannelRoute } from './catalog.js';

/**
 * The order in which a request tries channels: higher priority first; within one priority a weighted random
 * order (Efraimidis-Spirakis keys u^(1/w), compared as ln(u)/w so small weights do not underflow), so weight is
 * each channel's share of first attempts. Weight 0 channels come last, in random order among themselves.
 */
export function orderCandidates(routes: readonly ChannelRoute[], random: () => number = Math.random): ChannelRoute[] {
  if (routes.length <= 1) return [...routes];
  return routes
    .map((route) => {
      const weight = route.channel.weight;
      return { route, key: weight > 0 ? Math.log(1 - random()) / weight : Number.NEGATIVE_INFINITY, tie: random() };
    })
    .sort((left, right) => right.route.channel.priority - left.route.channel.priority || right.key - left.key || right.tie - left.tie)
    .map(({ route }) => route);
}
