import { NO_PASS_THROUGH, type Wire } from '../wire.js';

/** Jina AI's API (`POST /v1/rerank`), spoken to upstreams only: rerank requests are always translated. */
export const jinaWire: Wire<never> = { name: 'jina', passThrough: NO_PASS_THROUGH };
