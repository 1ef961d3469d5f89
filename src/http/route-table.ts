/** The methods a route table declares. */
export type HttpMethod = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

/**
 * The scope a group of routes shares (its repositories, small helpers, a management object), built once per set of
 * dependencies however many routers mount the group: the admin API's listener and the console's operator bridge
 * share one.
 */
export function sharedScope<Deps extends object, Scope>(scopeOf: (deps: Deps) => Scope): (deps: Deps) => Scope {
  const scopes = new WeakMap<Deps, Scope>();
  return (deps) => {
    let scope = scopes.get(deps);
    if (scope === undefined) {
      scope = scopeOf(deps);
      scopes.set(deps, scope);
    }
    return scope;
  };
}

/** `/admin/tiers/:name` → `/admin/tiers/{name}`: a path template as the docs write it. */
export function documentedPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}');
}
