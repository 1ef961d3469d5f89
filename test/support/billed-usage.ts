import type { PassThroughStreamObserver } from '../../src/codecs/client-codec.js';
import type { Usage } from '../../src/ir/usage.js';
import { usageOfDelivered } from '../../src/relay/delivered-usage.js';

/**
 * What the relay bills for a pass-through stream as observed so far, with `promptTokens` as the local input count;
 * `accepted`: the upstream accepted the request (an event other than an error arrived).
 */
export function billedUsage(observer: PassThroughStreamObserver, promptTokens: number, accepted = true): Promise<Usage | null> {
  return usageOfDelivered({
    reported: observer.reportedUsage(),
    final: observer.usageIsFinal(),
    accepted,
    deliveredText: () => observer.deliveredText(),
    promptTokens: () => Promise.resolve(promptTokens),
  });
}
