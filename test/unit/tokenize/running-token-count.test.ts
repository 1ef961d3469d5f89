import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { countTextTokensLocally } from '../../../src/tokenize/count-tokens-locally.js';
import { RunningTokenCount } from '../../../src/tokenize/running-token-count.js';

/** Adds `pieces` in turn, asking the total after each `askEvery` pieces, as checkpoints do while a stream runs. */
async function runningTotals(pieces: readonly string[], askEvery: number): Promise<{ totals: number[]; final: number }> {
  const count = new RunningTokenCount();
  const totals: number[] = [];
  for (const [index, piece] of pieces.entries()) {
    count.add(piece);
    if ((index + 1) % askEvery === 0) totals.push(await count.total());
  }
  return { totals, final: await count.total() };
}

describe('the running token count of a growing text', () => {
  it('equals the count of the whole text at every point, however the text arrives and whenever it is asked', async () => {
    const word = fc.oneof(fc.constantFrom(' ', '  ', '\n', 'the', ' heron', 'grey', 'é', '日本', '🙂', '{"q":1}'), fc.string({ maxLength: 40 }), fc.string({ minLength: 300, maxLength: 900 }));
    await fc.assert(
      fc.asyncProperty(fc.array(word, { maxLength: 60 }), fc.integer({ min: 1, max: 7 }), async (pieces, askEvery) => {
        const { totals, final } = await runningTotals(pieces, askEvery);
        expect(final).toBe(await countTextTokensLocally(pieces.join('')));
        for (const [index, total] of totals.entries()) expect(total).toBe(await countTextTokensLocally(pieces.slice(0, (index + 1) * askEvery).join('')));
      }),
      { numRuns: 60 },
    );
  });

  it('costs the text added since the last total, not the whole text again', async () => {
    const piece = 'lorem ipsum dolor sit amet consectetur adipiscing elit '.repeat(2000);
    const count = new RunningTokenCount();
    count.add(piece);
    await count.total();
    const timed = async (): Promise<number> => {
      const started = performance.now();
      count.add(piece);
      await count.total();
      return performance.now() - started;
    };
    const early = await timed();
    for (let index = 0; index < 60; index += 1) count.add(piece);
    await count.total();
    const late = await timed();
    // The 62nd piece costs about what the second did (the whole text is 60 times longer by then).
    expect(late).toBeLessThan(early * 5 + 20);
  });

  it('counts a backlog of megabytes in turns of the event loop, read lazily, to the same total', async () => {
    const delta = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor ';
    const pieces = 100_000;
    let read = 0;
    function* lazily(): Generator<string> {
      for (let index = 0; index < pieces; index += 1) {
        read += 1;
        yield delta;
      }
    }
    const count = new RunningTokenCount();
    count.addEach(lazily());
    count.add(delta.repeat(20_000));
    // Nothing is read before a total is asked.
    expect(read).toBe(0);
    let longestGap = 0;
    let last = performance.now();
    const probe = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 1);
    const total = await count.total();
    clearInterval(probe);
    expect(read).toBe(pieces);
    expect(total).toBe(await countTextTokensLocally(delta.repeat(pieces + 20_000)));
    // About 9 MB counted in one call (a second or more of work), the loop never held for long: turns of a few ms.
    expect(longestGap).toBeLessThan(250);
  });

  it('answers totals asked at once, one after another, each for the text added before it was asked', async () => {
    const count = new RunningTokenCount();
    const first = 'alpha beta gamma '.repeat(500);
    const second = 'delta epsilon '.repeat(700);
    count.add(first);
    const earlier = count.total();
    count.add(second);
    const later = count.total();
    expect(await earlier).toBe(await countTextTokensLocally(first));
    expect(await later).toBe(await countTextTokensLocally(first + second));
  });
});
