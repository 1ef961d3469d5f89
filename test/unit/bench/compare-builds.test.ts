import { describe, expect, it } from 'vitest';
import { parseBuilds, summarize } from '../../../bench/compare-builds.js';
import { median } from '../../../bench/measure.js';

describe('compare-builds', () => {
  it('names a build after its checkout unless named, takes settings for the build before them, and refuses clashing names', () => {
    expect(parseBuilds(['/tmp/before/dist', 'after=/work/main/dist', 'quiet=/work/main/dist', '+ACCESS_LOG=off', '+LOG_LEVEL=warn'])).toEqual([
      { name: 'before', dist: '/tmp/before/dist', env: {} },
      { name: 'after', dist: '/work/main/dist', env: {} },
      { name: 'quiet', dist: '/work/main/dist', env: { ACCESS_LOG: 'off', LOG_LEVEL: 'warn' } },
    ]);
    expect(() => parseBuilds(['+ACCESS_LOG=off', 'a=/x/dist'])).toThrow(/after the build/);
    expect(() => parseBuilds([])).toThrow(/at least one/);
    expect(() => parseBuilds(['a=/x/dist', 'a=/y/dist'])).toThrow(/same name/);
    expect(() => parseBuilds(['bare=/x/dist'])).toThrow(/bare proxy/);
  });

  it('pairs each burst with the same cycle’s burst of the base, so a cycle the machine ran slow cancels out', () => {
    // Cycle 2 ran at twice the cost for everybody: the unpaired medians move, the paired ratios do not.
    const summaries = summarize(
      [
        { name: 'bare', cpuMicrosPerRequest: [100, 200, 100], requestsPerSec: [9000, 4500, 9000] },
        { name: 'before', cpuMicrosPerRequest: [300, 600, 300], requestsPerSec: [3000, 1500, 3000] },
        { name: 'after', cpuMicrosPerRequest: [240, 480, 240], requestsPerSec: [3600, 1800, 3600] },
      ],
      'before',
    );
    expect(summaries.map((s) => [s.name, s.toBare, s.toFirstBuild])).toEqual([
      ['bare', null, 1 / 3],
      ['before', 3, null],
      ['after', 2.4, 0.8],
    ]);
    expect(summaries[2]).toMatchObject({ cpuMicrosPerRequest: 240, minCpuMicrosPerRequest: 240, maxCpuMicrosPerRequest: 480, requestsPerSec: 3600 });
  });

  it('takes the mean of the two middle values of an even count, not either one', () => {
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([300, 500])).toBe(400);
    expect(median([7])).toBe(7);
    expect(median([])).toBeNaN();
  });
});
