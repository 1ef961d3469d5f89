import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ADMIN_ROUTES } from '../../../src/admin-routes.js';
import { CONSOLE_API_ROUTES } from '../../../src/console/console-api.js';
import { API_ROUTES } from '../../../src/http/routes/api-routes.js';
import { compilePath } from '../../../src/http/router.js';

/**
 * The docs' route lists are held to the route tables: every route of a table is named in its doc (method and path,
 * parameters by any name), and every `METHOD /admin/…` or `METHOD /api/…` the doc names is a route the gateway has
 * (a concrete example path such as `/admin/tiers/default` counts when a route's pattern takes it).
 */
const METHOD = '(?:GET|POST|PATCH|PUT|DELETE)';
/** `GET /x`, `GET/PATCH /x`, `` `GET`, `PATCH /x` ``, `GET\|POST /x` (a Markdown table's escaped bar). */
const MENTION = new RegExp(`(${METHOD}(?:\`?(?:/|, |\\\\?\\|)\`?${METHOD})*)\`? (/[^\\s\`|?,)\\[]*)`, 'g');

interface Mention { method: string; path: string }

function mentionsIn(text: string): Mention[] {
  return [...text.matchAll(MENTION)].flatMap((match) => (match[1] ?? '').match(new RegExp(METHOD, 'g'))?.map((method) => ({ method, path: match[2] ?? '' })) ?? []);
}

/** Parameters by any name (`:id`, `:user_id`, `{id}`) read as one; a trailing `<path>` is the table's `*`. */
function shape(path: string): string {
  return path.replace(/\/<\w+>$/, '/*').replace(/\/(?::\w+|\{\w+\})/g, '/:');
}

function check(doc: string, routes: readonly { method: string; path: string }[], known: readonly { method: string; path: string | RegExp }[], prefixes: readonly string[]) {
  const text = readFileSync(new URL(`../../../docs/${doc}`, import.meta.url), 'utf8');
  const mentions = mentionsIn(text);
  const documented = new Set(mentions.map((mention) => `${mention.method} ${shape(mention.path)}`));
  const undocumented = routes.filter((route) => !documented.has(`${route.method} ${shape(route.path)}`)).map((route) => `${route.method} ${route.path}`);
  const shapes = new Set(known.flatMap((route) => (typeof route.path === 'string' ? [`${route.method} ${shape(route.path)}`] : [])));
  const unknown = mentions
    .filter((mention) => prefixes.some((prefix) => mention.path.startsWith(prefix)))
    .filter((mention) => !shapes.has(`${mention.method} ${shape(mention.path)}`))
    .filter((mention) => !known.some((route) => route.method === mention.method && !route.path.toString().endsWith('/*') && (typeof route.path === 'string' ? compilePath(route.path) : route.path).test(mention.path)))
    .map((mention) => `${mention.method} ${mention.path}`);
  return { undocumented, unknown: [...new Set(unknown)] };
}

describe('docs route lists', () => {
  it('docs/operators.md names every admin route, and only routes the admin API has', () => {
    expect(check('operators.md', ADMIN_ROUTES, [...ADMIN_ROUTES, ...API_ROUTES], ['/admin/'])).toEqual({ undocumented: [], unknown: [] });
  });

  it('docs/console-api.md names every console route, and only routes the gateway has', () => {
    // The public metadata under /api/ on the API listener (announcements, exchange rates) is named there too.
    expect(check('console-api.md', CONSOLE_API_ROUTES, [...CONSOLE_API_ROUTES, ...API_ROUTES], ['/api/'])).toEqual({ undocumented: [], unknown: [] });
  });

  it('sees a route missing from a doc, and a documented route no table has', () => {
    const doc = mentionsIn('| `GET`, `PATCH /admin/tiers/:name` | `GET\\|DELETE /admin/nothing/:id` |');
    expect(doc).toEqual([
      { method: 'GET', path: '/admin/tiers/:name' }, { method: 'PATCH', path: '/admin/tiers/:name' },
      { method: 'GET', path: '/admin/nothing/:id' }, { method: 'DELETE', path: '/admin/nothing/:id' },
    ]);
  });
});
