import { anthropicFamily, geminiFamily, openAIFamily, type ClientFamily } from '../../codecs/families.js';
import type { GatewayServices } from '../../services.js';
import type { RouteHandler } from '../request-context.js';
import { compilePath } from '../router.js';
import { speechRoute, transcriptionsRoute, translationsRoute } from './audio.js';
import { chatRoute } from './chat-endpoint.js';
import { anthropicMessagesEndpoint, geminiEndpoint, openAIChatEndpoint } from './chat-endpoints.js';
import { anthropicCountTokensRoute, geminiCountTokensRoute, responsesInputTokensRoute } from './count-tokens.js';
import { creditGrantsRoute } from './credit-grants.js';
import { geminiEmbeddingsRoute, openAIEmbeddingsRoute } from './embeddings.js';
import { livenessRoute, readinessRoute } from './health.js';
import { imageEditsRoute, imageGenerationsRoute, imageVariationsRoute } from './images.js';
import { getGeminiModelRoute, getModelRoute, listGeminiModelsRoute, listModelsRoute } from './models.js';
import { moderationsRoute } from './moderations.js';
import { announcementsRoute, fxLatestRoute, statusRoute } from './public-metadata.js';
import { redeemRoute } from './redeem.js';
import { responsesRoute, storedResponseRoute } from './responses.js';

/** The bounded labels of a request in the request metrics: its protocol family and its endpoint. */
export interface RouteLabels {
  readonly protocol: string;
  readonly endpoint: string;
  /** The route's path template (`/v1/models/{model}`), for trace span names; null for paths outside the table. */
  readonly route: string | null;
}

/** One route of the API listener outside /admin/: who calls it, its metric name, and its handler. */
export interface ApiRoute {
  method: 'GET' | 'POST' | 'DELETE';
  /** A path (`:name` segments are parameters) or a pattern with named groups. */
  path: string | RegExp;
  /** The client family whose SDKs call it (the metrics' protocol label), or `public` for family-less routes. */
  family: ClientFamily | 'public' | 'probe';
  /** The endpoint's metric label. */
  endpoint: string;
  handler: (services: GatewayServices) => RouteHandler;
}

/** `/v1beta/models/{model}:{action}` and the same under `/v1/` (the @google/genai SDK uses either). */
function geminiAction(action: string): RegExp {
  return new RegExp(`^/(?<version>v1beta|v1)/models/(?<model>[^/]+):${action}$`);
}

const openAI = (method: ApiRoute['method'], path: string, endpoint: string, handler: ApiRoute['handler']): ApiRoute =>
  ({ method, path, family: openAIFamily, endpoint, handler });

/**
 * Every API route of every family, declared once: the router mounts them in this order (a Gemini action before the
 * model lookup its path also matches), and the request metrics take their labels from the same entries.
 */
export const API_ROUTES: readonly ApiRoute[] = [
  openAI('POST', '/v1/chat/completions', 'chat.completions', (services) => chatRoute(services, openAIChatEndpoint)),
  openAI('POST', '/v1/embeddings', 'embeddings', openAIEmbeddingsRoute),
  // OpenAI Responses API: POST relays; stored-response operations answer 404 (no response bodies are kept).
  openAI('POST', '/v1/responses', 'responses', responsesRoute),
  openAI('POST', '/v1/responses/input_tokens', 'responses.input_tokens', responsesInputTokensRoute),
  openAI('GET', '/v1/responses/:id', 'responses.stored', storedResponseRoute),
  openAI('DELETE', '/v1/responses/:id', 'responses.stored', storedResponseRoute),
  openAI('POST', '/v1/responses/:id/cancel', 'responses.stored', storedResponseRoute),
  openAI('GET', '/v1/responses/:id/input_items', 'responses.stored', storedResponseRoute),
  // Media (images, audio, moderations): OpenAI's wire; multipart uploads are spooled to disk, never held whole.
  openAI('POST', '/v1/images/generations', 'images.generations', imageGenerationsRoute),
  openAI('POST', '/v1/images/edits', 'images.edits', imageEditsRoute),
  openAI('POST', '/v1/images/variations', 'images.variations', imageVariationsRoute),
  openAI('POST', '/v1/audio/transcriptions', 'audio.transcriptions', transcriptionsRoute),
  openAI('POST', '/v1/audio/translations', 'audio.translations', translationsRoute),
  openAI('POST', '/v1/audio/speech', 'audio.speech', speechRoute),
  openAI('POST', '/v1/moderations', 'moderations', moderationsRoute),
  openAI('GET', '/v1/dashboard/billing/credit_grants', 'credit_grants', creditGrantsRoute),
  openAI('POST', '/v1/dashboard/billing/redeem', 'redeem', redeemRoute),

  { method: 'POST', path: '/v1/messages', family: anthropicFamily, endpoint: 'messages', handler: (services) => chatRoute(services, anthropicMessagesEndpoint) },
  { method: 'POST', path: '/v1/messages/count_tokens', family: anthropicFamily, endpoint: 'count_tokens', handler: anthropicCountTokensRoute },

  { method: 'POST', path: geminiAction('generateContent'), family: geminiFamily, endpoint: 'generateContent', handler: (services) => chatRoute(services, geminiEndpoint(false)) },
  { method: 'POST', path: geminiAction('streamGenerateContent'), family: geminiFamily, endpoint: 'streamGenerateContent', handler: (services) => chatRoute(services, geminiEndpoint(true)) },
  { method: 'POST', path: geminiAction('countTokens'), family: geminiFamily, endpoint: 'countTokens', handler: geminiCountTokensRoute },
  { method: 'POST', path: geminiAction('embedContent'), family: geminiFamily, endpoint: 'embedContent', handler: (services) => geminiEmbeddingsRoute(services, false) },
  { method: 'POST', path: geminiAction('batchEmbedContents'), family: geminiFamily, endpoint: 'batchEmbedContents', handler: (services) => geminiEmbeddingsRoute(services, true) },
  { method: 'GET', path: '/v1beta/models', family: geminiFamily, endpoint: 'models', handler: listGeminiModelsRoute },
  { method: 'GET', path: '/v1beta/models/:model', family: geminiFamily, endpoint: 'models', handler: getGeminiModelRoute },

  // After the Gemini actions: `/v1/models/{model}:generateContent` matches this path too.
  openAI('GET', '/v1/models', 'models', listModelsRoute),
  openAI('GET', '/v1/models/:model', 'models', getModelRoute),

  { method: 'GET', path: '/healthz', family: 'probe', endpoint: 'healthz', handler: () => livenessRoute() },
  { method: 'GET', path: '/readyz', family: 'probe', endpoint: 'readyz', handler: readinessRoute },
  { method: 'GET', path: '/api/status', family: 'public', endpoint: 'status', handler: statusRoute },
  { method: 'GET', path: '/api/public/announcements', family: 'public', endpoint: 'announcements', handler: announcementsRoute },
  { method: 'GET', path: '/api/fx/latest', family: 'public', endpoint: 'fx', handler: fxLatestRoute },
];

const label = (protocol: string, endpoint: string, route: string | null): RouteLabels => Object.freeze({ protocol, endpoint, route });
const ADMIN = label('admin', 'admin', '/admin/*');
const OTHER = label('other', 'other', null);

/** A string path's template: `:name` segments become `{name}`. */
const templateOf = (path: string): string => path.replace(/\/:([^/]+)/g, '/{$1}');

/**
 * The metric labels of a path, from the route table: a fixed path by one map lookup, a patterned one by the first
 * pattern it matches; /admin/* and /metrics are the admin API's, and any other path shares one label so junk
 * traffic cannot add series.
 */
export function routeLabeller(routes: readonly ApiRoute[]): (path: string) => RouteLabels {
  const exact = new Map<string, RouteLabels>([['/metrics', label('admin', 'metrics', '/metrics')]]);
  // A Gemini action's pattern serves /v1beta/ and /v1/: its template keeps the version the caller used.
  const patterned: Array<{ pattern: RegExp; labels: RouteLabels; v1Labels: RouteLabels }> = [];
  for (const route of routes) {
    const protocol = typeof route.family === 'string' ? route.family : route.family.name;
    if (typeof route.path === 'string' && !route.path.includes(':')) {
      exact.set(route.path, label(protocol, route.endpoint, route.path));
      continue;
    }
    const pattern = typeof route.path === 'string' ? compilePath(route.path) : route.path;
    if (patterned.some((entry) => entry.pattern.source === pattern.source)) continue;
    const labels = label(protocol, route.endpoint, typeof route.path === 'string' ? templateOf(route.path) : `/v1beta/models/{model}:${route.endpoint}`);
    const v1Labels = typeof route.path === 'string' ? labels : label(protocol, route.endpoint, `/v1/models/{model}:${route.endpoint}`);
    patterned.push({ pattern, labels, v1Labels });
  }
  return (path) => {
    const fixed = exact.get(path);
    if (fixed !== undefined) return fixed;
    if (path.startsWith('/admin/')) return ADMIN;
    for (const entry of patterned) if (entry.pattern.test(path)) return path.startsWith('/v1/') ? entry.v1Labels : entry.labels;
    return OTHER;
  };
}

/** The labels of the API listener's requests. */
export const apiRouteLabels = routeLabeller(API_ROUTES);
