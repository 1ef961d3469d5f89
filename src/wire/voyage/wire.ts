import { NO_PASS_THROUGH, type Wire } from '../wire.js';

/** Voyage AI's API (`POST /v1/rerank`), spoken to upstreams only: rerank requests are always translated. */
export const voyageWire: Wire<never> = { name: 'voyage', passThrough: NO_PASS_THROUGH };
