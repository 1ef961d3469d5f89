import type { RequestContext, RouteHandler } from '../http/request-context.js';
import type { Router } from '../http/router.js';
import { sharedScope, type HttpMethod } from '../http/route-table.js';
import type { ConsoleDeps } from './console-deps.js';
import { anyoneRoute, signedInRoute, type AnyConsoleRequest, type SignedInRequest } from './console-route.js';
import type { OperatorPermission } from './operator/operator-roles.js';
import { operatorRoute, type OperatorRequest } from './operator/operator-route.js';
import type { ConsolePermission } from './roles.js';

interface RouteBase {
  readonly method: HttpMethod;
  /** A path under /api/; `:name` segments are parameters. */
  readonly path: string;
}

/**
 * One route of the console's JSON API, with who may call it:
 * - `anyone`: visitors without a session too (changes still need the CSRF token);
 * - `member`: a signed-in user whose role on the session's account allows `permission` (null: any member);
 * - `operator`: a signed-in operator with a second factor whose operator role allows `permission`;
 * - `caller`: the handler establishes the caller itself (the billing pages' injected session, a signed webhook).
 */
export type ConsoleRouteOf<Scope> =
  | (RouteBase & { readonly who: 'anyone'; readonly handler: (scope: Scope) => (request: AnyConsoleRequest) => Promise<void> })
  | (RouteBase & { readonly who: 'member'; readonly permission: ConsolePermission | null; readonly handler: (scope: Scope) => (request: SignedInRequest) => Promise<void> })
  | (RouteBase & { readonly who: 'operator'; readonly permission: OperatorPermission | ((context: RequestContext) => OperatorPermission); readonly handler: (scope: Scope) => (request: OperatorRequest) => Promise<void> })
  | (RouteBase & { readonly who: 'caller'; readonly handler: (scope: Scope) => RouteHandler });

export type ConsoleRoute = ConsoleRouteOf<ConsoleDeps>;

/**
 * A feature's console routes as one table: `scopeOf` builds what its handlers share from the console's dependencies
 * (once per dependencies), each entry says method, path, who may call it and the handler. A table whose handlers
 * take other dependencies (the billing pages take the caller from an injected `authenticate`) is bound to the
 * console's the same way: `consoleRoutes((deps) => theirDeps, theirTable)`.
 */
export function consoleRoutes<Scope, Deps extends object = ConsoleDeps>(scopeOf: (deps: Deps) => Scope, routes: readonly ConsoleRouteOf<Scope>[]): ConsoleRouteOf<Deps>[] {
  const scope = sharedScope(scopeOf);
  return routes.map((route): ConsoleRouteOf<Deps> => {
    switch (route.who) {
      case 'anyone': return { ...route, handler: (deps) => route.handler(scope(deps)) };
      case 'member': return { ...route, handler: (deps) => route.handler(scope(deps)) };
      case 'operator': return { ...route, handler: (deps) => route.handler(scope(deps)) };
      case 'caller': return { ...route, handler: (deps) => route.handler(scope(deps)) };
    }
  });
}

/** The route's handler behind its session, CSRF, role and operator checks. */
export function consoleHandler(deps: ConsoleDeps, route: ConsoleRoute): RouteHandler {
  switch (route.who) {
    case 'anyone': return anyoneRoute(deps, route.handler(deps));
    case 'member': return signedInRoute(deps, route.permission, route.handler(deps));
    case 'operator': return operatorRoute(deps, route.permission, route.handler(deps));
    case 'caller': return route.handler(deps);
  }
}

export function mountConsoleRoutes(router: Router, deps: ConsoleDeps, routes: readonly ConsoleRoute[]): Router {
  for (const route of routes) router.add(route.method, route.path, consoleHandler(deps, route));
  return router;
}
