import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/shared/ids.js';

const ID = /^[a-z]+_[0-9a-z]{10}[0-9a-z]{12}$/;

describe('newId', () => {
  it('sorts ids made in one millisecond in the order they were made', () => {
    const now = Date.UTC(2026, 10, 26, 12, 0, 0, 0);
    const ids = Array.from({ length: 2000 }, () => newId('led', now));
    for (const id of ids) expect(id).toMatch(ID);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it('sorts ids by their millisecond first, whatever came before', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 2 ** 44 }), { minLength: 2, maxLength: 50 }), (times) => {
      const made = times.map((time) => ({ time, id: newId('x', time) }));
      for (const { time, id } of made) expect(id.slice(2, 12)).toBe(time.toString(36).padStart(10, '0'));
      const later = made.filter((entry) => entry.time > (made[0] as { time: number }).time);
      for (const entry of later) expect(entry.id > (made[0] as { id: string }).id).toBe(true);
    }));
  });

  it('draws a fresh random part for each new millisecond', () => {
    const a = newId('req', 1_000);
    const b = newId('req', 1_001);
    const c = newId('req', 1_002);
    // Three consecutive increments would differ only in their last characters.
    expect(new Set([a.slice(-12, -2), b.slice(-12, -2), c.slice(-12, -2)]).size).toBeGreaterThan(1);
  });
});
