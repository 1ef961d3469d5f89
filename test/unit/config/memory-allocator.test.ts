import { describe, expect, it } from 'vitest';
import { findJemalloc, preloadEnvironment } from '../../../src/config/memory-allocator.js';

describe.skipIf(findJemalloc() === null)('the jemalloc restart', () => {
  it('is asked for on Linux with the library installed and nothing preloaded', () => {
    expect(preloadEnvironment({}, 'linux')).toMatchObject({ LD_PRELOAD: expect.stringMatching(/libjemalloc\.so\.2$/) });
  });

  it('is not asked for when opted out, on another platform or under the operator\'s own LD_PRELOAD', () => {
    expect(preloadEnvironment({ MEMORY_ALLOCATOR: 'system' }, 'linux')).toBeNull();
    expect(preloadEnvironment({}, 'darwin')).toBeNull();
    expect(preloadEnvironment({ LD_PRELOAD: 'libz.so.1' }, 'linux')).toBeNull();
  });
});
