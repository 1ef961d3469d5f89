import type { PassThroughStreamObserver } from '../../src/codecs/client-codec.js';
import type { Usage } from '../../src/ir/usage.js';
import { usageOfDelivered } from '../../src/relay/delivered-usage.js';
import { RunningTokenCount } from '../../src/tokenize/running-token-count.js';

/**
 * What the relay bills for a pass-through stream as observed so far, with `promptTokens` as the local input count;
 * `accepted`: the upstream accepted the request (an event other than an error arrived); `taken` receives the
 * delivered text the observer handed over (it hands each piece over once).
 */
export function billedUsage(observer: PassThroughStreamObserver, promptTokens: number, accepted = true, taken?: string[]): Promise<Usage | null> {
  const delivered = new RunningTokenCount();
  return usageOfDelivered({
    reported: observer.reportedUsage(),
    final: observer.usageIsFinal(),
    accepted,
    deliveredTokens: () => {
      const text = [...observer.takeDeliveredText()].join('');
      taken?.push(text);
      delivered.add(text);
      return delivered.total();
    },
    promptTokens: () => Promise.resolve(promptTokens),
  });
}
