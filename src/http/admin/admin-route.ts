import type { GatewayServices } from '../../services.js';
import type { RouteHandler } from '../request-context.js';
import type { Router } from '../router.js';
import { sharedScope, type HttpMethod } from '../route-table.js';
import { adminOnly } from './admin-guard.js';

/**
 * What an operator in the console needs to make an admin call through the bridge: `read` (every operator role),
 * `write`, or `support:reply` (support staff answer tickets without other write rights).
 */
export type AdminPermission = 'read' | 'write' | 'support:reply';

/** One route of the admin API (/admin/* on the API listener, and /api/operator/admin/* for operators). */
export interface AdminRouteOf<Scope> {
  readonly method: HttpMethod;
  /** A path under /admin/; `:name` segments are parameters. */
  readonly path: string;
  /** What an operator's role must allow; without it, GET is `read` and every change `write`. */
  readonly permission?: AdminPermission;
  /** The handler, given its group's scope; the admin token (or an authorised operator call) is checked before it. */
  readonly handler: (scope: Scope) => RouteHandler;
}

export type AdminRoute = AdminRouteOf<GatewayServices>;

/**
 * A feature's admin routes as one table: `scopeOf` builds what its handlers share from the services (once per
 * services), each entry says method, path, the operator permission when not the default, and the handler.
 */
export function adminRoutes<Scope>(scopeOf: (services: GatewayServices) => Scope, routes: readonly AdminRouteOf<Scope>[]): AdminRoute[] {
  const scope = sharedScope(scopeOf);
  return routes.map((route) => ({ ...route, handler: (services: GatewayServices) => route.handler(scope(services)) }));
}

/** The permission an operator needs for `route`. */
export function adminPermissionOf(route: Pick<AdminRoute, 'method' | 'permission'>): AdminPermission {
  return route.permission ?? (route.method === 'GET' ? 'read' : 'write');
}

/** Mounts admin routes, each behind the admin token (adminOnly). */
export function mountAdminRoutes(router: Router, services: GatewayServices, routes: readonly AdminRoute[]): Router {
  for (const route of routes) router.add(route.method, route.path, adminOnly(services, route.handler(services)));
  return router;
}
