import { describe, expect, it } from 'vitest';
import { isBundledKyselySpecifier, loadKyselyFromBundle } from '../../../src/config/bundled-kysely.js';

describe('kysely from its bundle', () => {
  it('answers for kysely\'s entry and its migration API, nothing else', () => {
    expect(isBundledKyselySpecifier('kysely')).toBe(true);
    expect(isBundledKyselySpecifier('kysely/migration')).toBe(true);
    // Subpaths the bundle does not hold, and other packages, resolve as they are.
    expect(isBundledKyselySpecifier('kysely/helpers/postgres')).toBe(false);
    expect(isBundledKyselySpecifier('./kysely')).toBe(false);
    expect(isBundledKyselySpecifier('pg')).toBe(false);
  });

  it('changes nothing where the bundle was not built', () => {
    expect(loadKyselyFromBundle(new URL('file:///nonexistent/dist/vendor/kysely.js'))).toBe(false);
  });
});
