import { apiRouteLabels } from '../http/routes/api-routes.js';

/**
 * The route template of a path (`http.route`), from the API route table that also names the metric labels: a
 * fixed path as is, a patterned one as its template (`/v1/models/{model}`), the admin API as `/admin/*`; null for
 * anything else, so junk cannot add span names.
 */
export function httpRouteOf(path: string): string | null {
  return apiRouteLabels(path).route;
}
