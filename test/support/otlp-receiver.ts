import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An OTLP/JSON attribute as exported. */
export interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: { values?: Array<{ stringValue?: string }> } };
}

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: OtlpAttribute[];
  status: { code: number };
}

export interface OtlpReceiver {
  /** The base endpoint (OTEL_EXPORTER_OTLP_ENDPOINT): http://127.0.0.1:PORT */
  url: string;
  /** Every request body received, as text, by path (`/v1/traces`, `/v1/metrics`). */
  bodies: Array<{ path: string; body: string; headers: Record<string, string | string[] | undefined> }>;
  /** Every span received so far, with its resource's attributes. */
  spans(): Array<OtlpSpan & { resource: OtlpAttribute[] }>;
  /** Names of every metric received so far with their data points. */
  metrics(): Array<{ name: string; unit: string; dataPoints: Array<{ attributes: OtlpAttribute[]; count: string; sum: number; bucketCounts: string[] }> }>;
  /** Waits (at most `timeoutMs`) until `predicate` holds. */
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** The attribute's value as a plain JS value (integers as numbers). */
export function attributeValue(attributes: readonly OtlpAttribute[], key: string): string | number | boolean | undefined {
  const found = attributes.find((attribute) => attribute.key === key)?.value;
  if (found === undefined) return undefined;
  if (found.stringValue !== undefined) return found.stringValue;
  if (found.intValue !== undefined) return Number(found.intValue);
  if (found.doubleValue !== undefined) return found.doubleValue;
  return found.boolValue;
}

/** The strings of an array attribute; undefined when absent or not an array. */
export function attributeStrings(attributes: readonly OtlpAttribute[], key: string): string[] | undefined {
  const values = attributes.find((attribute) => attribute.key === key)?.value.arrayValue?.values;
  return values?.map((value) => value.stringValue ?? '');
}

/** A plain node:http OTLP/HTTP receiver taking JSON bodies, answering 200 `{}` like a collector. */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const bodies: OtlpReceiver['bodies'] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = (request.url ?? '/').split('?')[0] as string;
      if (request.method !== 'POST' || request.headers['content-type'] !== 'application/json') {
        response.writeHead(415).end();
        return;
      }
      bodies.push({ path, body, headers: request.headers });
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const parsed = (path: string): Array<Record<string, unknown>> => bodies.filter((entry) => entry.path === path).map((entry) => JSON.parse(entry.body) as Record<string, unknown>);
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    spans() {
      type Payload = { resourceSpans: Array<{ resource: { attributes: OtlpAttribute[] }; scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
      return parsed('/v1/traces').flatMap((payload) => (payload as unknown as Payload).resourceSpans.flatMap((resourceSpans) =>
        resourceSpans.scopeSpans.flatMap((scope) => scope.spans.map((span) => ({ ...span, resource: resourceSpans.resource.attributes }))),
      ));
    },
    metrics() {
      type Payload = { resourceMetrics: Array<{ scopeMetrics: Array<{ metrics: Array<{ name: string; unit: string; histogram: { dataPoints: Array<{ attributes: OtlpAttribute[]; count: string; sum: number; bucketCounts: string[] }> } }> }> }> };
      return parsed('/v1/metrics').flatMap((payload) => (payload as unknown as Payload).resourceMetrics.flatMap((resource) =>
        resource.scopeMetrics.flatMap((scope) => scope.metrics.map((metric) => ({ name: metric.name, unit: metric.unit, dataPoints: metric.histogram.dataPoints }))),
      ));
    },
    async waitFor(predicate, timeoutMs = 5000) {
      const deadline = performance.now() + timeoutMs;
      while (!predicate()) {
        if (performance.now() > deadline) throw new Error('timed out waiting for OTLP data');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
