import type { RequestContext, RouteHandler } from '../../http/request-context.js';
import type { Router } from '../../http/router.js';
import { loadOnce } from '../../shared/load-once.js';
import type { Logger } from '../../shared/logger.js';
import { assetHeaders, documentHeaders } from './security-headers.js';
import { loadWebBuild, webBuildPresent, type WebBuild, type WebFile } from './web-build.js';

/** The codings an Accept-Encoding header allows (`q=0` refuses one). */
function acceptedCodings(header: string | undefined): Set<string> {
  const accepted = new Set<string>();
  for (const part of (header ?? '').toLowerCase().split(',')) {
    const [name = '', ...parameters] = part.split(';').map((piece) => piece.trim());
    const quality = parameters.find((parameter) => parameter.startsWith('q='));
    if (name !== '' && (quality === undefined || Number(quality.slice(2)) > 0)) accepted.add(name);
  }
  return accepted;
}

/** Which stored copy suits the caller (brotli first, then gzip, else identity). */
function chooseEncoding(file: WebFile, acceptEncoding: string | undefined): { body: Buffer; encoding: 'br' | 'gzip' | null } {
  const accepted = acceptedCodings(acceptEncoding);
  const allows = (name: string) => accepted.has(name) || accepted.has('*');
  if (file.brotli !== null && allows('br')) return { body: file.brotli, encoding: 'br' };
  if (file.gzip !== null && allows('gzip')) return { body: file.gzip, encoding: 'gzip' };
  return { body: file.body, encoding: null };
}

function sendFile(context: RequestContext, file: WebFile, isDocument: boolean): void {
  const { request, response } = context;
  for (const [name, value] of Object.entries(isDocument ? documentHeaders : assetHeaders)) response.setHeader(name, value);
  response.setHeader('content-type', file.contentType);
  response.setHeader('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
  response.setHeader('etag', file.etag);
  if (file.brotli !== null || file.gzip !== null) response.setHeader('vary', 'accept-encoding');
  if (request.headers['if-none-match'] === file.etag) {
    response.statusCode = 304;
    response.end();
    return;
  }
  const { body, encoding } = chooseEncoding(file, request.headers['accept-encoding']);
  if (encoding !== null) response.setHeader('content-encoding', encoding);
  response.setHeader('content-length', body.length);
  response.statusCode = 200;
  response.end(context.method === 'HEAD' ? undefined : body);
}

/** A path with a file extension or under /assets/ names a file: when missing it is a 404, never the app page. */
function namesFile(path: string): boolean {
  return path.startsWith('/assets/') || /\.[a-z0-9]+$/i.test(path.slice(path.lastIndexOf('/')));
}

const notBuiltPage = '<!doctype html><meta charset="utf-8"><title>Console not built</title>'
  + '<h1>The web console is not built</h1><p>Build it with <code>npm run build</code> (<code>npm ci</code> runs it too), '
  + 'then restart the gateway. The console\'s JSON API under <code>/api/</code> works without it.</p>';

function webAppHandler(read: () => WebBuild | null): RouteHandler {
  // Read at the first page asked for (a few hundred kilobytes, held from then on): a gateway whose console nobody
  // opens never holds it. Requests arriving meanwhile share the one read.
  const web = loadOnce(() => Promise.resolve().then(read));
  return async (context) => {
    const { response } = context;
    const build = web.loaded() ?? await web.get();
    if (build === null) {
      response.statusCode = 503;
      response.setHeader('content-type', 'text/html; charset=utf-8');
      response.setHeader('cache-control', 'no-store');
      for (const [name, value] of Object.entries(documentHeaders)) response.setHeader(name, value);
      response.end(context.method === 'HEAD' ? undefined : notBuiltPage);
      return;
    }
    const file = build.files.get(context.path);
    if (file !== undefined) {
      sendFile(context, file, file === build.index);
      return;
    }
    if (namesFile(context.path)) {
      response.statusCode = 404;
      for (const [name, value] of Object.entries(assetHeaders)) response.setHeader(name, value);
      response.setHeader('content-type', 'text/plain; charset=utf-8');
      response.setHeader('cache-control', 'no-store');
      response.end(context.method === 'HEAD' ? undefined : 'Not found\n');
      return;
    }
    // Client-side routes (/keys, /usage, /verify-email?token=…) all load the one page; the app routes itself.
    sendFile(context, build.index, true);
  };
}

/** Every GET and HEAD outside /api/ and /healthz: the app's own route table answers those. */
const webAppPaths = /^\/(?!api(?:\/|$)|healthz$)/;

/**
 * Serves the built browser app from memory, read at the first page asked for: hashed assets cached for a year, the
 * page revalidated on each visit, compressed copies by Accept-Encoding, and the security headers on the page.
 * Register it after the API routes.
 */
export function addWebAppRoutes(router: Router, logger: Logger, read: () => WebBuild | null = loadWebBuild): void {
  if (read === loadWebBuild && !webBuildPresent()) logger.warn('the web console is not built: run `npm run build`; the console listener answers 503 on its pages until then');
  const handler = webAppHandler(read);
  router.add('GET', webAppPaths, handler).add('HEAD', webAppPaths, handler);
}
