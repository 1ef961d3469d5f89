/** planResponseCache: the early answer for a model without a policy and a request without cache headers is the full rule's. */
import { describe, expect, it, vi } from 'vitest';
import type { ModelCachePolicy } from '../../../../src/domain/model-records.js';
import type { ChatRequest } from '../../../../src/ir/chat-request.js';
import { CACHE_HEADER, CACHE_TTL_HEADER, planResponseCache } from '../../../../src/relay/response-cache/cache-plan.js';

type Headers = Record<string, string | string[] | undefined>;

const chat = (): ChatRequest => ({ model: 'm', system: [], messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }], stream: false, extensions: {}, warnings: [] });
const POLICY: ModelCachePolicy = { ttlSeconds: 60, hitPriceBasisPoints: 1000, shared: false };

/** The plan, or the error's code when the headers are refused. */
function outcome(policy: ModelCachePolicy | null, headers: Headers): unknown {
  try {
    return planResponseCache(policy, headers, 'acct', 'm', chat);
  } catch (error) {
    return { refused: (error as { code?: string }).code };
  }
}

/** Every combination of the three headers the plan reads, each absent, empty, well formed or malformed. */
function headerSets(): Headers[] {
  const optIns = [undefined, '', 'on', 'off', 'TRUE', 'maybe'];
  const ttls = [undefined, '', '30', '0', 'soon'];
  const controls = [undefined, 'no-cache', 'no-store', 'max-age=0, no-cache'];
  const sets: Headers[] = [];
  for (const optIn of optIns) for (const ttl of ttls) for (const control of controls) {
    sets.push({ host: 'gateway', [CACHE_HEADER]: optIn, [CACHE_TTL_HEADER]: ttl, 'cache-control': control });
  }
  return sets;
}

describe('planResponseCache', () => {
  it('answers null for a model without a policy when neither cache header is sent, without decoding the request', () => {
    const decode = vi.fn(chat);
    for (const control of [undefined, 'no-cache', 'no-store']) {
      expect(planResponseCache(null, { host: 'gateway', 'cache-control': control }, 'acct', 'm', decode)).toBeNull();
    }
    expect(decode).not.toHaveBeenCalled();
  });

  it('gives an absent cache header the plan an empty one gets from the full rule, with or without a policy', () => {
    for (const policy of [null, POLICY]) {
      for (const headers of headerSets()) {
        const blanked: Headers = { ...headers, [CACHE_HEADER]: headers[CACHE_HEADER] ?? '', [CACHE_TTL_HEADER]: headers[CACHE_TTL_HEADER] ?? '' };
        expect(outcome(policy, headers)).toEqual(outcome(policy, blanked));
      }
    }
  });

  it('still refuses a malformed cache header on a model without a policy', () => {
    expect(outcome(null, { [CACHE_HEADER]: 'maybe' })).toEqual({ refused: 'bad_request' });
    expect(outcome(null, { [CACHE_TTL_HEADER]: 'soon' })).toEqual({ refused: 'bad_request' });
    expect(outcome(null, { [CACHE_HEADER]: 'on' })).toMatchObject({ key: expect.stringMatching(/^[0-9a-f]{64}$/), lookup: true, store: true, ttlMs: 300_000, hitPriceBasisPoints: 0 });
  });
});
