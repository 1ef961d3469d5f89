import { describe, expect, it } from 'vitest';
import { isZodLocaleBundle } from '../../../src/config/zod-locales.js';

const ZOD = 'file:///srv/unigate/node_modules/zod/v4';

describe('zod\'s bundle of every language', () => {
  it('is recognised where zod\'s entry modules import it', () => {
    expect(isZodLocaleBundle('../locales/index.js', `${ZOD}/core/index.js`)).toBe(true);
    expect(isZodLocaleBundle('../locales/index.js', `${ZOD}/classic/external.js`)).toBe(true);
    expect(isZodLocaleBundle('../locales/index.js', `${ZOD}/mini/external.js`)).toBe(true);
  });

  it('is the only thing redirected: English itself, zod\'s other modules and anyone else\'s locales load as they are', () => {
    expect(isZodLocaleBundle('../locales/en.js', `${ZOD}/classic/schemas.js`)).toBe(false);
    expect(isZodLocaleBundle('./schemas.js', `${ZOD}/classic/external.js`)).toBe(false);
    expect(isZodLocaleBundle('../locales/index.js', 'file:///srv/unigate/dist/src/http/admin/account-routes.js')).toBe(false);
    expect(isZodLocaleBundle('../locales/index.js', 'file:///srv/unigate/node_modules/other/v4/core/index.js')).toBe(false);
    expect(isZodLocaleBundle('../locales/index.js', undefined)).toBe(false);
  });
});
