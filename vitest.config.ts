import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two cores: more parallel files than this only adds contention with the gateway processes under test.
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
  },
});
