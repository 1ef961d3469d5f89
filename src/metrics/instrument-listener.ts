import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayMetrics } from './gateway-metrics.js';

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** The bounded labels of a request: its protocol family and endpoint, from a fixed list. */
export interface RouteLabels {
  readonly protocol: string;
  readonly endpoint: string;
}

const label = (protocol: string, endpoint: string): RouteLabels => Object.freeze({ protocol, endpoint });

const EXACT = new Map<string, RouteLabels>([
  ['/v1/chat/completions', label('openai', 'chat.completions')],
  ['/v1/embeddings', label('openai', 'embeddings')],
  ['/v1/responses', label('openai', 'responses')],
  ['/v1/responses/input_tokens', label('openai', 'responses.input_tokens')],
  ['/v1/images/generations', label('openai', 'images.generations')],
  ['/v1/images/edits', label('openai', 'images.edits')],
  ['/v1/images/variations', label('openai', 'images.variations')],
  ['/v1/audio/transcriptions', label('openai', 'audio.transcriptions')],
  ['/v1/audio/translations', label('openai', 'audio.translations')],
  ['/v1/audio/speech', label('openai', 'audio.speech')],
  ['/v1/moderations', label('openai', 'moderations')],
  ['/v1/dashboard/billing/redeem', label('openai', 'redeem')],
  ['/v1/models', label('openai', 'models')],
  ['/v1/dashboard/billing/credit_grants', label('openai', 'credit_grants')],
  ['/v1/messages', label('anthropic', 'messages')],
  ['/v1/messages/count_tokens', label('anthropic', 'count_tokens')],
  ['/v1beta/models', label('gemini', 'models')],
  ['/api/status', label('public', 'status')],
  ['/api/public/announcements', label('public', 'announcements')],
  ['/api/fx/latest', label('public', 'fx')],
  ['/metrics', label('admin', 'metrics')],
]);

const GEMINI_ACTIONS = new Map<string, RouteLabels>(
  ['generateContent', 'streamGenerateContent', 'countTokens', 'embedContent', 'batchEmbedContents'].map((action) => [action, label('gemini', action)]),
);
const GEMINI_OTHER = label('gemini', 'other');
const OPENAI_MODEL = label('openai', 'models');
const GEMINI_MODEL = label('gemini', 'models');
const ADMIN = label('admin', 'admin');
const OTHER = label('other', 'other');

/** Protocol and endpoint labels of a path; unknown paths share one label so junk traffic cannot add series. */
export function routeLabels(path: string): RouteLabels {
  const exact = EXACT.get(path);
  if (exact !== undefined) return exact;
  if (path.startsWith('/admin/')) return ADMIN;
  const modelsAt = path.startsWith('/v1/models/') ? 11 : path.startsWith('/v1beta/models/') ? 15 : -1;
  if (modelsAt < 0) return OTHER;
  const colon = path.indexOf(':', modelsAt);
  if (colon < 0) return modelsAt === 11 ? OPENAI_MODEL : GEMINI_MODEL;
  return GEMINI_ACTIONS.get(path.slice(colon + 1)) ?? GEMINI_OTHER;
}

/**
 * Wraps the API listener: `requests_total`, `request_duration_seconds` and `in_flight_requests`, recorded when
 * the response closes (status 499 when the caller left before it finished). Also counts the requests in flight
 * for a graceful shutdown.
 */
export function instrumentListener(listener: RequestListener, metrics: GatewayMetrics): { listener: RequestListener; inFlight: () => number } {
  let count = 0;
  return {
    listener: (request, response) => {
      const startedAt = performance.now();
      const url = request.url ?? '/';
      const queryAt = url.indexOf('?');
      const labels = routeLabels(queryAt < 0 ? url : url.slice(0, queryAt));
      count += 1;
      metrics.inFlight.inc();
      response.once('close', () => {
        count -= 1;
        metrics.inFlight.dec();
        const status = response.writableFinished ? response.statusCode : 499;
        metrics.requests.labels(labels.protocol, labels.endpoint, status).inc();
        metrics.requestDuration.labels(labels.protocol, labels.endpoint).observe((performance.now() - startedAt) / 1000);
      });
      listener(request, response);
    },
    inFlight: () => count,
  };
}
