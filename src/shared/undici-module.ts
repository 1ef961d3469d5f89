import { loadOnce } from './load-once.js';

/**
 * undici's whole client API (`request`, `fetch`), loaded at its first use rather than at start: a gateway that sends
 * no webhooks and calls no guardrail webhook never holds it (the relay's upstream traffic only needs undici's
 * dispatcher core, src/upstreams/undici-dispatch.ts).
 */
export const undiciModule = loadOnce(() => import('undici'));
