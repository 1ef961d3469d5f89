import { describe, expect, it } from 'vitest';
import { subscribesTo } from '../../../src/domain/webhook-events.js';

describe('which endpoints hear of an event', () => {
  it('an empty list hears of every event; a list hears of the events it names', () => {
    expect(subscribesTo([], 'key.disabled')).toBe(true);
    expect(subscribesTo(['key.disabled'], 'key.disabled')).toBe(true);
    expect(subscribesTo(['key.paused'], 'key.disabled')).toBe(false);
  });

  it('an endpoint stored with the balance alert’s former name still hears of it, and of nothing else by that name', () => {
    expect(subscribesTo(['balance.threshold_crossed'], 'account.balance_low')).toBe(true);
    expect(subscribesTo(['balance.threshold_crossed'], 'key.quota_threshold_crossed')).toBe(false);
  });
});
