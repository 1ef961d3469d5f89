import { afterEach, describe, expect, it, vi } from 'vitest';
import { ensureDebianPackage } from '../../support/debian-package.js';

describe('a Debian tool the tests need', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
  });

  it('that is missing skips its tests, except under REQUIRE_TEST_TOOLS=1 where it fails them', () => {
    // Not root: nothing is installed, the tool stays missing.
    vi.spyOn(process as { getuid: () => number }, 'getuid').mockReturnValue(1000);
    vi.stubEnv('REQUIRE_TEST_TOOLS', '');
    expect(ensureDebianPackage('/nonexistent/tool', 'no-such-package', 'probe')).toBe(false);
    vi.stubEnv('REQUIRE_TEST_TOOLS', '1');
    expect(() => ensureDebianPackage('/nonexistent/tool', 'no-such-package', 'probe')).toThrow(/no-such-package could not be installed/);
    expect(ensureDebianPackage(process.execPath, 'nodejs', 'probe')).toBe(true);
  });
});
