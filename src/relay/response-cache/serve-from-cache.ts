import type { ClientCodec } from '../../codecs/client-codec.js';
import type { RequestMeter } from '../request-meter.js';
import type { ResponseSink } from '../response-sink.js';
import { CACHE_HEADER, type CachePlan } from './cache-plan.js';
import { replayCachedAnswer } from './replay-cached-answer.js';
import type { AnswerCapture, ResponseCache } from './response-cache.js';

/** How the answer says what the cache did: `hit`, `miss` (answered upstream, stored) or `bypass` (not cached). */
export type CacheStatus = 'hit' | 'miss' | 'bypass';

export interface CacheReplayRequest {
  sink: ResponseSink;
  meter: RequestMeter;
  codec: ClientCodec;
  stream: boolean;
  model: string;
  headers: Record<string, string>;
  now: number;
}

export type CacheOutcome =
  | { answered: true }
  /** Not answered from the cache: relay with these headers, recording the answer with `capture` when set. */
  | { answered: false; headers: Record<string, string>; capture: AnswerCapture | null };

/**
 * The cache's turn in an admitted chat request: a stored answer is replayed (no upstream call), otherwise the relay
 * goes ahead with the cache status header and, unless the request says `no-store`, a capture that stores its answer.
 */
export async function serveFromCache(cache: ResponseCache, plan: CachePlan, request: CacheReplayRequest): Promise<CacheOutcome> {
  const stored = await cache.lookup(plan);
  if (stored !== null) {
    await replayCachedAnswer(request.sink, request.meter, request.codec, stored, { ...request, headers: statusHeaders(request.headers, 'hit'), hitPriceBasisPoints: plan.hitPriceBasisPoints });
    return { answered: true };
  }
  const capture = cache.capture(plan);
  return { answered: false, headers: statusHeaders(request.headers, capture === null ? 'bypass' : 'miss'), capture };
}

function statusHeaders(headers: Record<string, string>, status: CacheStatus): Record<string, string> {
  return { ...headers, [CACHE_HEADER]: status };
}
