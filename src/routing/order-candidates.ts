import type { ChannelRoute } from './catalog.js';

/**
 * The order in which a request tries channels: higher priority first; within one priority a weighted random
 * order (Efraimidis-Spirakis keys), so weight is each channel's share of first attempts.
 */
export function orderCandidates(routes: readonly ChannelRoute[], random: () => number = Math.random): ChannelRoute[] {
  if (routes.length <= 1) return [...routes];
  return routes
    .map((route) => ({ route, key: Math.pow(random(), 1 / Math.max(route.channel.weight, 1e-9)) }))
    .sort((left, right) => right.route.channel.priority - left.route.channel.priority || right.key - left.key)
    .map(({ route }) => route);
}
