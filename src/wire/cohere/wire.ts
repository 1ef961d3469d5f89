import { NO_PASS_THROUGH, type Wire } from '../wire.js';

/** Cohere's API (`POST /v2/rerank`), spoken to upstreams only: rerank requests are always translated. */
export const cohereWire: Wire<never> = { name: 'cohere', passThrough: NO_PASS_THROUGH };
