import { routeLabels } from '../metrics/instrument-listener.js';

const GEMINI_ACTION = /^\/(v1beta|v1)\/models\/[^/]+:([A-Za-z]+)$/;

/**
 * The route template of a path (`http.route`), from the same bounded list as the metric labels: a known path as
 * is, model paths with `{model}`, the admin API as `/admin/*`; null for anything else (junk cannot add span names).
 */
export function httpRouteOf(path: string): string | null {
  const labels = routeLabels(path);
  switch (labels.endpoint) {
    case 'other':
      return null;
    case 'admin':
      return '/admin/*';
    default:
      break;
  }
  if (labels.protocol === 'gemini' && path.includes(':')) {
    const match = GEMINI_ACTION.exec(path);
    return match === null ? null : `/${match[1]}/models/{model}:${match[2]}`;
  }
  if (path.startsWith('/v1/models/')) return '/v1/models/{model}';
  if (path.startsWith('/v1beta/models/')) return '/v1beta/models/{model}';
  return path;
}
