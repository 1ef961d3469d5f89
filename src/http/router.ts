import type { RouteHandler } from './request-context.js';

interface PatternRoute {
  method: string;
  pattern: RegExp;
  handler: RouteHandler;
}

export type RouteMatch =
  | { kind: 'found'; handler: RouteHandler; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' }
  /** A path parameter with a malformed %-escape. */
  | { kind: 'malformed-path' };

/**
 * Turns `/v1/models/:model` into a RegExp with named groups; a last segment `*` matches the rest of the path (empty
 * included). A pattern may also be given as a RegExp.
 */
export function compilePath(pattern: string): RegExp {
  const segments = pattern.split('/');
  const source = segments
    .map((segment, index) => {
      if (segment === '*' && index === segments.length - 1) return '.*';
      return segment.startsWith(':') ? `(?<${segment.slice(1)}>[^/]+)` : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return new RegExp(`^${source}$`);
}

/** A mounted group's entry: it takes every method and answers 404 and 405 itself. */
const ANY_METHOD = '*';

/** Static paths resolve with one Map lookup; patterned paths are tried in registration order. */
export class Router {
  readonly #static = new Map<string, Map<string, RouteHandler>>();
  readonly #patterns: PatternRoute[] = [];

  add(method: string, pattern: string | RegExp, handler: RouteHandler): this {
    if (typeof pattern === 'string' && !pattern.includes(':') && !pattern.endsWith('/*')) {
      let byMethod = this.#static.get(pattern);
      if (byMethod === undefined) this.#static.set(pattern, (byMethod = new Map()));
      byMethod.set(method, handler);
    } else {
      this.#patterns.push({ method, pattern: typeof pattern === 'string' ? compilePath(pattern) : pattern, handler });
    }
    return this;
  }

  /**
   * Every path under `prefix` (`/admin` serves `/admin/…`), whatever the method, goes to `handler`, tried in
   * registration order among the patterned routes: a group of routes that has its own router behind one entry.
   */
  mount(prefix: string, handler: RouteHandler): this {
    this.#patterns.push({ method: ANY_METHOD, pattern: compilePath(`${prefix}/*`), handler });
    return this;
  }

  match(method: string, path: string): RouteMatch {
    const byMethod = this.#static.get(path);
    const staticHandler = byMethod?.get(method);
    if (staticHandler !== undefined) return { kind: 'found', handler: staticHandler, params: {} };
    const allowed = byMethod === undefined ? [] : [...byMethod.keys()];
    for (const route of this.#patterns) {
      const found = route.pattern.exec(path);
      if (found === null) continue;
      if (route.method !== method && route.method !== ANY_METHOD) {
        allowed.push(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      for (const [name, value] of Object.entries(found.groups ?? {})) {
        try {
          params[name] = decodeURIComponent(value);
        } catch {
          return { kind: 'malformed-path' };
        }
      }
      return { kind: 'found', handler: route.handler, params };
    }
    return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
  }
}
