import { AnswerPrice, type AnswerReport } from '../../billing/answer-report.js';
import type { ClientCodec } from '../../codecs/client-codec.js';
import type { Model } from '../../domain/model-records.js';
import type { ResponseSink } from '../response-sink.js';
import { CACHE_HEADER, type CachePlan } from './cache-plan.js';
import { replayCachedAnswer } from './replay-cached-answer.js';
import type { AnswerCapture, ResponseCache } from './response-cache.js';

/** How the answer says what the cache did: `hit`, `miss` (answered upstream, stored) or `bypass` (not cached). */
export type CacheStatus = 'hit' | 'miss' | 'bypass';

export interface CacheReplayRequest {
  sink: ResponseSink;
  codec: ClientCodec;
  stream: boolean;
  /** The model id the caller named, echoed in the answer. */
  model: string;
  /** The model the answer is priced at. */
  pricedAt: Model;
  headers: Record<string, string>;
  now: number;
}

export type CacheOutcome =
  | { answered: true; report: AnswerReport }
  /** Not answered from the cache: relay with these headers, recording the answer with `capture` when set. */
  | { answered: false; headers: Record<string, string>; capture: AnswerCapture | null };

/**
 * The cache's turn in an admitted chat request: a stored answer is replayed (no upstream call), otherwise the relay
 * goes ahead with the cache status header and, unless the request says `no-store`, a capture that stores its answer.
 */
export async function serveFromCache(cache: ResponseCache, plan: CachePlan, request: CacheReplayRequest): Promise<CacheOutcome> {
  const stored = await cache.lookup(plan);
  if (stored !== null) {
    const price = new AnswerPrice(request.pricedAt, plan.hitPriceBasisPoints);
    const report = await replayCachedAnswer(request.sink, request.codec, stored, { ...request, headers: statusHeaders(request.headers, 'hit'), price });
    return { answered: true, report };
  }
  const capture = cache.capture(plan);
  return { answered: false, headers: statusHeaders(request.headers, capture === null ? 'bypass' : 'miss'), capture };
}

function statusHeaders(headers: Record<string, string>, status: CacheStatus): Record<string, string> {
  return { ...headers, [CACHE_HEADER]: status };
}
