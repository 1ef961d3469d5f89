import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatewayMetrics } from './gateway-metrics.js';

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** The labels of a request's route, as the API's route table (handed in by the root) gives them. */
export interface MetricLabels {
  readonly protocol: string;
  readonly endpoint: string;
}

/** The instrumented listener and the answers it has in flight (the listener's drain waits for them). */
export interface InstrumentedListener {
  listener: RequestListener;
  answers: ReadonlySet<ServerResponse>;
}

/**
 * Wraps the API listener: `requests_total`, `request_duration_seconds`, `admission_latency_seconds` and `in_flight_requests`, recorded when
 * the response closes (status 499 when the caller left before it finished). Also holds the answers in flight for
 * a graceful shutdown.
 */
export function instrumentListener(listener: RequestListener, metrics: GatewayMetrics, routeLabels: (path: string) => MetricLabels): InstrumentedListener {
  const answers = new Set<ServerResponse>();
  return {
    listener: (request, response) => {
      const startedAt = performance.now();
      const url = request.url ?? '/';
      const queryAt = url.indexOf('?');
      const labels = routeLabels(queryAt < 0 ? url : url.slice(0, queryAt));
      answers.add(response);
      metrics.inFlight.inc();
      response.once('close', () => {
        answers.delete(response);
        metrics.inFlight.dec();
        const status = response.writableFinished ? response.statusCode : 499;
        metrics.requests.labels(labels.protocol, labels.endpoint, status).inc();
        const seconds = (performance.now() - startedAt) / 1000;
        metrics.requestDuration.labels(labels.protocol, labels.endpoint).observe(seconds);
        metrics.admissionLatency.labels(status === 503 ? 'refused' : 'admitted').observe(seconds);
      });
      listener(request, response);
    },
    answers,
  };
}
