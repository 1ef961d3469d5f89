import { describe, expect, it } from 'vitest';
import { ADMIN_ROUTES } from '../../../src/admin-routes.js';

/**
 * The API listener loads the admin routes at their first request, mounted under /admin and at /metrics alone
 * (src/app.ts): an admin route at any other path would never be reached.
 */
describe('admin route paths', () => {
  it('all lie under /admin/ except the Prometheus scrape at /metrics', () => {
    const outside = ADMIN_ROUTES.map((route) => route.path).filter((path) => !path.startsWith('/admin/'));
    expect(outside).toEqual(['/metrics']);
  });
});
