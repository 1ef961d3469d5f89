import { relative } from 'node:path';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/**
 * Files that drive a fleet, a browser or real processes for a minute or so each start first, whatever vitest's
 * cache of the last run holds (nothing after `npm ci`, a skipped file's near-zero time after a run without nginx):
 * started last, one of them runs alone on one fork while the other has nothing left to do.
 */
const SLOW_FIRST = ['test/e2e/fleet/', 'test/browser/', 'test/e2e/cli/'];

class SlowFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification): number => {
      const path = relative(this.ctx.config.root, file.moduleId).replaceAll('\\', '/');
      const index = SLOW_FIRST.findIndex((prefix) => path.startsWith(prefix));
      return index === -1 ? SLOW_FIRST.length : index;
    };
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two cores: more parallel files than this only adds contention with the gateway processes under test.
    // One process per fork for the whole run: Node, vitest and the dependencies (SDKs, playwright, drivers) load once
    // per fork instead of once per file; the setup file gives each file its own instance of the project's modules.
    maxWorkers: 2,
    isolate: false,
    setupFiles: ['test/support/fresh-project-modules.ts'],
    sequence: { sequencer: SlowFilesFirst },
  },
});
