import { createRequire } from 'node:module';
import type * as Undici from 'undici';

/**
 * undici's dispatcher core (Agent, Pool and the error classes they fail with) without the rest of its index: the
 * package's entry also loads its fetch, WebSocket, EventSource, cache, cookie and mock modules, about 3 MiB of heap
 * an idle relay would hold for nothing. These are the very modules the index re-exports (one module cache), so the
 * classes and their errors are the same as the package's; a request relayed through them only calls `dispatch`.
 * The paths are undici's own layout, so the dependency is pinned exactly (a new version is checked, then pinned).
 */
const load = createRequire(import.meta.url);

export const Agent = load('undici/lib/dispatcher/agent.js') as typeof Undici.Agent;
export const Pool = load('undici/lib/dispatcher/pool.js') as typeof Undici.Pool;
export const errors = load('undici/lib/core/errors.js') as typeof Undici.errors;
export type Agent = Undici.Agent;
export type Pool = Undici.Pool;
