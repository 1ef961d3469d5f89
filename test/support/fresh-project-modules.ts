/**
 * Runs before each test file. The forks run file after file in one process (vitest.config.ts), so that Node, vitest
 * and the dependencies load once per fork; the project's own modules are dropped here, so each file imports them
 * afresh and no module state (ID pools, caches, lazily made decoys) carries over from the file before.
 */
import { vi } from 'vitest';

vi.resetModules();
