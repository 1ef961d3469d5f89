import { loadOnce } from '../shared/load-once.js';
import { routeRequest } from './create-listener.js';
import type { RouteHandler } from './request-context.js';
import type { Router } from './router.js';

/**
 * A handler whose modules a fresh instance does not load: the first request it serves loads them and builds the
 * handler (requests arriving meanwhile wait for the same load; a failed load is tried again by the next request),
 * then every request goes straight to it. The route stays in its router's table, so which paths and methods it
 * answers (and the 404 and 405 around it) does not depend on whether it is loaded yet.
 */
export function lazyRoute(build: () => Promise<RouteHandler>): RouteHandler {
  const handler = loadOnce(build);
  return async (context) => {
    const loaded = handler.loaded() ?? await handler.get();
    await loaded(context);
  };
}

/**
 * The entry of a group of routes loaded at its first request (see lazyRoute): the load builds the group's router,
 * and every request under the group's prefix is routed there, its 404 and 405 answered as the listener's router
 * answers them. Mount it with `router.mount(prefix, lazyRouteGroup(...))`.
 */
export function lazyRouteGroup(build: () => Promise<Router>): RouteHandler {
  return lazyRoute(async () => {
    const router = await build();
    return (context) => routeRequest(router, context);
  });
}
