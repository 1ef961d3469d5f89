import { anthropicFamily, CLIENT_FAMILIES, geminiFamily, openAIFamily, type ClientFamily } from '../../codecs/families.js';
import type { FamilyRoute } from '../../codecs/family-route.js';
import type { GatewayServices } from '../../services.js';
import type { RouteHandler } from '../request-context.js';
import { compilePath } from '../router.js';
import { speechRoute, transcriptionsRoute, translationsRoute } from '../../operations/audio.js';
import { chatRoute } from '../../operations/chat-endpoint.js';
import { countTokensRoute } from '../../operations/count-tokens.js';
import { creditGrantsRoute } from './credit-grants.js';
import { embeddingsRoute } from '../../operations/embeddings.js';
import { livenessRoute, readinessRoute } from './health.js';
import { imageEditsRoute, imageGenerationsRoute, imageVariationsRoute } from '../../operations/images.js';
import { getModelRoute, listModelsRoute } from './models.js';
import { moderationsRoute } from '../../operations/moderations.js';
import { realtimeWithoutUpgrade } from '../../realtime/socket-endpoints.js';
import { announcementsRoute, fxLatestRoute, statusRoute } from './public-metadata.js';
import { storedResponseRoute } from './responses.js';
import { lazyRoute } from '../lazy-route-group.js';
import { asGemini, forGoogleClients } from './google-callers.js';
import { withMcpTools } from '../../mcp-tools/mcp-tools-route.js';

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
  /** A pattern's path templates (see FamilyRoute.templates). */
  templates?: readonly string[];
  /** The client family whose SDKs call it (the metrics' protocol label), or `public` for family-less routes. */
  family: ClientFamily | 'public' | 'probe';
  /** The endpoint's metric label. */
  endpoint: string;
  handler: (services: GatewayServices) => RouteHandler;
}

/** The handler of a family's route: the operation it names, with the parts the family gave. */
function operationHandler(family: ClientFamily, route: FamilyRoute): ApiRoute['handler'] {
  switch (route.operation) {
    // A chat route serves the MCP tools a request names (Responses `mcp` tools, Anthropic `mcp_servers`) in front of the chat operation.
    case 'chat': return (services) => withMcpTools(services, route.chat.protocol, chatRoute(services, route.chat));
    case 'countTokens': return (services) => countTokensRoute(services, route.countTokens);
    case 'embeddings': return (services) => embeddingsRoute(services, route.embeddings);
    case 'listModels': return (services) => listModelsRoute(services, family);
    case 'getModel': return (services) => getModelRoute(services, family);
  }
}

const familyRoutes = (family: ClientFamily): ApiRoute[] =>
  family.routes.map((route) => ({
    method: route.method,
    path: route.path,
    ...(route.templates === undefined ? {} : { templates: route.templates }),
    family,
    endpoint: route.endpoint,
    handler: operationHandler(family, route),
  }));

/**
 * A route whose module is loaded at the route's first request rather than at start (see lazyRoute): `pick` names
 * its handler in the loaded module. The route's entry stays in the table, so paths, methods and labels are the same.
 */
const lazy = <Module>(load: () => Promise<Module>, pick: (module: Module) => ApiRoute['handler']): ApiRoute['handler'] =>
  (services) => lazyRoute(async () => pick(await load())(services));

// The modules of routes few gateways serve, each loaded by its first request.
const batches = () => import('./batches.js');
const messageBatches = () => import('./message-batches.js');
const geminiBatches = () => import('./gemini-batches.js');
const files = () => import('./files.js');
const geminiFiles = () => import('./gemini-files.js');
const rerank = () => import('../../operations/rerank.js');
const mcp = () => import('../../mcp/mcp-endpoint.js');
const clientSecrets = () => import('../../realtime/client-secrets-route.js');
const geminiAuthTokens = () => import('../../realtime/gemini-auth-tokens-route.js');
const redeem = () => import('./redeem.js');

const rerankRoute = lazy(rerank, (module) => module.rerankRoute);
const uploadFileRoute = lazy(files, (module) => module.uploadFileRoute);
const listFilesRoute = lazy(files, (module) => module.listFilesRoute);
const getFileRoute = lazy(files, (module) => module.getFileRoute);
const deleteFileRoute = lazy(files, (module) => module.deleteFileRoute);
const fileContentRoute = lazy(files, (module) => module.fileContentRoute);
const geminiUploadRoute = lazy(geminiFiles, (module) => module.geminiUploadRoute);
const listGeminiFilesRoute = lazy(geminiFiles, (module) => module.listGeminiFilesRoute);
const getGeminiFileRoute = lazy(geminiFiles, (module) => module.getGeminiFileRoute);
const deleteGeminiFileRoute = lazy(geminiFiles, (module) => module.deleteGeminiFileRoute);
const downloadGeminiFileRoute = lazy(geminiFiles, (module) => module.downloadGeminiFileRoute);
const createBatchRoute = lazy(batches, (module) => module.createBatchRoute);
const listBatchesRoute = lazy(batches, (module) => module.listBatchesRoute);
const getBatchRoute = lazy(batches, (module) => module.getBatchRoute);
const cancelBatchRoute = lazy(batches, (module) => module.cancelBatchRoute);
const createMessageBatchRoute = lazy(messageBatches, (module) => module.createMessageBatchRoute);
const listMessageBatchesRoute = lazy(messageBatches, (module) => module.listMessageBatchesRoute);
const getMessageBatchRoute = lazy(messageBatches, (module) => module.getMessageBatchRoute);
const deleteMessageBatchRoute = lazy(messageBatches, (module) => module.deleteMessageBatchRoute);
const cancelMessageBatchRoute = lazy(messageBatches, (module) => module.cancelMessageBatchRoute);
const messageBatchResultsRoute = lazy(messageBatches, (module) => module.messageBatchResultsRoute);
const createGeminiBatchRoute = lazy(geminiBatches, (module) => module.createGeminiBatchRoute);
const listGeminiBatchesRoute = lazy(geminiBatches, (module) => module.listGeminiBatchesRoute);
const getGeminiBatchRoute = lazy(geminiBatches, (module) => module.getGeminiBatchRoute);
const deleteGeminiBatchRoute = lazy(geminiBatches, (module) => module.deleteGeminiBatchRoute);
const cancelGeminiBatchRoute = lazy(geminiBatches, (module) => module.cancelGeminiBatchRoute);
const mcpRoute = lazy(mcp, (module) => module.mcpRoute);
const clientSecretsRoute = lazy(clientSecrets, (module) => module.clientSecretsRoute);
const geminiAuthTokensRoute = lazy(geminiAuthTokens, (module) => module.geminiAuthTokensRoute);
const redeemRoute = lazy(redeem, (module) => module.redeemRoute);

const anthropic = (method: ApiRoute['method'], path: string, endpoint: string, handler: ApiRoute['handler']): ApiRoute =>
  ({ method, path, family: anthropicFamily, endpoint, handler });

/** A Gemini route given by its pattern and its path templates (see FamilyRoute.templates). */
const gemini = (method: ApiRoute['method'], path: RegExp, templates: readonly string[], endpoint: string, handler: ApiRoute['handler']): ApiRoute =>
  ({ method, path, templates, family: geminiFamily, endpoint, handler: asGemini(handler) });

const openAI = (method: ApiRoute['method'], path: string, endpoint: string, handler: ApiRoute['handler']): ApiRoute =>
  ({ method, path, family: openAIFamily, endpoint, handler });

/**
 * Every API route, declared once: each family's own routes in the order of CLIENT_FAMILIES, then the routes the
 * gateway answers itself. The router mounts them in this order, and the request metrics take their labels from the
 * same entries.
 */
export const API_ROUTES: readonly ApiRoute[] = [
  ...CLIENT_FAMILIES.flatMap(familyRoutes),
  // Stored-response operations answer 404: no response bodies are kept.
  openAI('GET', '/v1/responses/:id', 'responses.stored', storedResponseRoute),
  openAI('DELETE', '/v1/responses/:id', 'responses.stored', storedResponseRoute),
  openAI('POST', '/v1/responses/:id/cancel', 'responses.stored', storedResponseRoute),
  openAI('GET', '/v1/responses/:id/input_items', 'responses.stored', storedResponseRoute),
  // Reranking: Cohere v2's shape on the usual path, and on Cohere's own (`/v2/rerank`) for Cohere's SDK.
  openAI('POST', '/v1/rerank', 'rerank', rerankRoute),
  openAI('POST', '/v2/rerank', 'rerank', rerankRoute),
  // Media (images, audio, moderations): OpenAI's wire; multipart uploads are spooled to disk, never held whole.
  openAI('POST', '/v1/images/generations', 'images.generations', imageGenerationsRoute),
  openAI('POST', '/v1/images/edits', 'images.edits', imageEditsRoute),
  openAI('POST', '/v1/images/variations', 'images.variations', imageVariationsRoute),
  openAI('POST', '/v1/audio/transcriptions', 'audio.transcriptions', transcriptionsRoute),
  openAI('POST', '/v1/audio/translations', 'audio.translations', translationsRoute),
  openAI('POST', '/v1/audio/speech', 'audio.speech', speechRoute),
  openAI('POST', '/v1/moderations', 'moderations', moderationsRoute),
  // Files: kept by the gateway (for batches, and the other purposes OpenAI's SDK uploads), each account its own.
  openAI('POST', '/v1/files', 'files', uploadFileRoute),
  // Google's SDK reads its files here too (under /v1/ by default): its callers get Gemini's file routes.
  openAI('GET', '/v1/files', 'files', forGoogleClients(listGeminiFilesRoute, listFilesRoute)),
  openAI('GET', '/v1/files/:id', 'files', forGoogleClients(getGeminiFileRoute, getFileRoute)),
  openAI('DELETE', '/v1/files/:id', 'files', forGoogleClients(deleteGeminiFileRoute, deleteFileRoute)),
  openAI('GET', '/v1/files/:id/content', 'files.content', fileContentRoute),
  // Batches: lines queued in the database and run by the gateway itself through the routes above, on any model.
  openAI('POST', '/v1/batches', 'batches', createBatchRoute),
  // Google's SDK reads its batches here too (under /v1/ by default): its callers get Gemini's batch routes.
  openAI('GET', '/v1/batches', 'batches', forGoogleClients(listGeminiBatchesRoute, listBatchesRoute)),
  openAI('GET', '/v1/batches/:id', 'batches', forGoogleClients(getGeminiBatchRoute, getBatchRoute)),
  openAI('POST', '/v1/batches/:id/cancel', 'batches.cancel', cancelBatchRoute),
  // Anthropic's Message Batches: the same queue and runner, each request run through /v1/messages.
  anthropic('POST', '/v1/messages/batches', 'message_batches', createMessageBatchRoute),
  anthropic('GET', '/v1/messages/batches', 'message_batches', listMessageBatchesRoute),
  anthropic('GET', '/v1/messages/batches/:id', 'message_batches', getMessageBatchRoute),
  anthropic('DELETE', '/v1/messages/batches/:id', 'message_batches', deleteMessageBatchRoute),
  anthropic('POST', '/v1/messages/batches/:id/cancel', 'message_batches.cancel', cancelMessageBatchRoute),
  anthropic('GET', '/v1/messages/batches/:id/results', 'message_batches.results', messageBatchResultsRoute),
  // Gemini's batch mode: the same queue and runner, each inlined request run through models/{model}:generateContent.
  // Under /v1beta/ and /v1/ (the SDK's default); a GET under /v1/batches is Gemini's for Google's clients only (above).
  gemini('POST', /^\/(?:v1beta|v1)\/models\/(?<model>[^/]+):batchGenerateContent$/, ['/v1beta/models/{model}:batchGenerateContent', '/v1/models/{model}:batchGenerateContent'], 'batchGenerateContent', createGeminiBatchRoute),
  gemini('GET', /^\/v1beta\/batches$/, ['/v1beta/batches'], 'gemini_batches', listGeminiBatchesRoute),
  gemini('GET', /^\/v1beta\/batches\/(?<id>[^/:]+)$/, ['/v1beta/batches/{id}'], 'gemini_batches', getGeminiBatchRoute),
  gemini('DELETE', /^\/(?:v1beta|v1)\/batches\/(?<id>[^/:]+)$/, ['/v1beta/batches/{id}', '/v1/batches/{id}'], 'gemini_batches', deleteGeminiBatchRoute),
  gemini('POST', /^\/(?:v1beta|v1)\/batches\/(?<id>[^/:]+):cancel$/, ['/v1beta/batches/{id}:cancel', '/v1/batches/{id}:cancel'], 'gemini_batches.cancel', cancelGeminiBatchRoute),
  // Gemini Live's ephemeral tokens (sessions themselves are WebSocket upgrades, src/realtime).
  gemini('POST', /^\/(?:v1alpha|v1beta)\/auth_tokens$/, ['/v1alpha/auth_tokens', '/v1beta/auth_tokens'], 'auth_tokens', geminiAuthTokensRoute),
  // Gemini's Files API as @google/genai calls it: resumable uploads, then the files under /v1beta/ (and /v1/, above).
  gemini('POST', /^\/upload\/(?:v1beta|v1)\/files$/, ['/upload/v1beta/files', '/upload/v1/files'], 'gemini_files.upload', geminiUploadRoute),
  gemini('GET', /^\/v1beta\/files$/, ['/v1beta/files'], 'gemini_files', listGeminiFilesRoute),
  gemini('GET', /^\/v1beta\/files\/(?<id>[^/:]+):download$/, ['/v1beta/files/{id}:download'], 'gemini_files.download', downloadGeminiFileRoute),
  gemini('GET', /^\/v1beta\/files\/(?<id>[^/:]+)$/, ['/v1beta/files/{id}'], 'gemini_files', getGeminiFileRoute),
  gemini('DELETE', /^\/v1beta\/files\/(?<id>[^/:]+)$/, ['/v1beta/files/{id}'], 'gemini_files', deleteGeminiFileRoute),
  // Realtime: sessions are WebSocket upgrades (src/realtime); a plain GET is told so. Client secrets are minted here.
  openAI('GET', '/v1/realtime', 'realtime', () => realtimeWithoutUpgrade),
  openAI('POST', '/v1/realtime/client_secrets', 'realtime-client-secrets', clientSecretsRoute),
  openAI('GET', '/v1/dashboard/billing/credit_grants', 'credit_grants', creditGrantsRoute),
  openAI('POST', '/v1/dashboard/billing/redeem', 'redeem', redeemRoute),
  // The MCP gateway: one Streamable HTTP endpoint for every server a key may use, and one per server.
  ...(['POST', 'GET', 'DELETE'] as const).flatMap((method) => [openAI(method, '/mcp', 'mcp', mcpRoute), openAI(method, '/mcp/:server', 'mcp', mcpRoute)]),

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
  // A pattern with several templates (a Gemini action under /v1beta/ and /v1/) keeps the one the caller used.
  const patterned: Array<{ pattern: RegExp; byPrefix: Array<{ prefix: string; labels: RouteLabels }>; first: RouteLabels }> = [];
  for (const route of routes) {
    const protocol = typeof route.family === 'string' ? route.family : route.family.name;
    if (typeof route.path === 'string' && !route.path.includes(':')) {
      exact.set(route.path, label(protocol, route.endpoint, route.path));
      continue;
    }
    const pattern = typeof route.path === 'string' ? compilePath(route.path) : route.path;
    if (patterned.some((entry) => entry.pattern.source === pattern.source)) continue;
    const templates = typeof route.path === 'string' ? [templateOf(route.path)] : (route.templates ?? []);
    const byPrefix = templates.map((template) => ({ prefix: template.split('{', 1)[0] ?? template, labels: label(protocol, route.endpoint, template) }));
    const first = byPrefix[0];
    if (first === undefined) throw new Error(`The route pattern ${pattern.source} names no path template.`);
    patterned.push({ pattern, byPrefix, first: first.labels });
  }
  return (path) => {
    const fixed = exact.get(path);
    if (fixed !== undefined) return fixed;
    if (path.startsWith('/admin/')) return ADMIN;
    for (const { pattern, byPrefix, first } of patterned) {
      if (pattern.test(path)) return byPrefix.find((entry) => path.startsWith(entry.prefix))?.labels ?? first;
    }
    return OTHER;
  };
}

/** The labels of the API listener's requests. */
export const apiRouteLabels = routeLabeller(API_ROUTES);
