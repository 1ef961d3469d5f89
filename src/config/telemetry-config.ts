import { integerSetting, SettingError } from './settings.js';
/** How traces are sampled (OTEL_TRACES_SAMPLER): a caller's sampled flag is followed by the `parentbased_` ones. */
export type TraceSampler =
  | { kind: 'always_on' | 'always_off' | 'parentbased_always_on' | 'parentbased_always_off' }
  | { kind: 'traceidratio' | 'parentbased_traceidratio'; ratio: number };

/** Where and how spans and metrics are exported over OTLP/HTTP with JSON bodies. */
export interface OtlpConfig {
  /** Full URL spans are POSTed to (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces). */
  tracesUrl: string;
  /** Full URL metrics are POSTed to (OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/metrics). */
  metricsUrl: string;
  /** Extra request headers (OTEL_EXPORTER_OTLP_HEADERS), e.g. an API key of the collector. */
  headers: Record<string, string>;
  /** Per export request (OTEL_EXPORTER_OTLP_TIMEOUT, ms). */
  timeoutMs: number;
  /** service.name of the resource (OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES' service.name, else `unigate`). */
  serviceName: string;
  /** Further resource attributes (OTEL_RESOURCE_ATTRIBUTES: `key=value,…`). */
  resourceAttributes: Record<string, string>;
  sampler: TraceSampler;
  /** Ended spans held for export at most (OTEL_BSP_MAX_QUEUE_SIZE); more are dropped and counted. */
  maxQueueSize: number;
  /** Spans per export request at most (OTEL_BSP_MAX_EXPORT_BATCH_SIZE). */
  maxExportBatchSize: number;
  /** Longest wait before queued spans are sent (OTEL_BSP_SCHEDULE_DELAY, ms). */
  scheduleDelayMs: number;
  /** Metrics are sent this often (OTEL_METRIC_EXPORT_INTERVAL, ms). */
  metricIntervalMs: number;
}

export interface TelemetryConfig {
  /** null: OTEL_EXPORTER_OTLP_ENDPOINT (and the per-signal endpoints) unset or OTEL_SDK_DISABLED=true; nothing is traced. */
  otlp: OtlpConfig | null;
  /** One JSON line per API request at info level (ACCESS_LOG, default on). */
  accessLog: boolean;
}

export class TelemetryConfigError extends SettingError {
  override name = 'TelemetryConfigError';
}

type Read = (name: string) => string | undefined;

function httpUrl(name: string, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TelemetryConfigError(`${name} is not a URL (expected e.g. http://collector:4318)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TelemetryConfigError(`${name} must start with http:// or https://`);
  return url;
}

/** The base endpoint with the signal's path appended (`/v1/traces`), as OTLP/HTTP exporters do. */
function signalUrl(base: URL, signalPath: string): string {
  const path = base.pathname.endsWith('/') ? base.pathname.slice(0, -1) : base.pathname;
  return `${base.origin}${path}${signalPath}${base.search}`;
}

/** `key=value` pairs separated by commas, values percent-decoded (the W3C baggage form the OTel env uses). */
export function parseKeyValueList(name: string, raw: string | undefined): Record<string, string> {
  const pairs: Record<string, string> = {};
  if (raw === undefined) return pairs;
  for (const entry of raw.split(',')) {
    if (entry.trim() === '') continue;
    const equals = entry.indexOf('=');
    const key = equals < 0 ? '' : entry.slice(0, equals).trim();
    if (key === '') throw new TelemetryConfigError(`${name} entries must be key=value, got "${entry.trim().slice(0, 40)}"`);
    try {
      pairs[key] = decodeURIComponent(entry.slice(equals + 1).trim());
    } catch {
      throw new TelemetryConfigError(`${name} has a malformed percent-escape in the value of "${key}"`);
    }
  }
  return pairs;
}

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const;

function readSampler(read: Read): TraceSampler {
  const kind = read('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on';
  if (!(SAMPLERS as readonly string[]).includes(kind)) throw new TelemetryConfigError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}, got "${kind}"`);
  if (kind !== 'traceidratio' && kind !== 'parentbased_traceidratio') return { kind: kind as Exclude<TraceSampler['kind'], 'traceidratio' | 'parentbased_traceidratio'> };
  const raw = read('OTEL_TRACES_SAMPLER_ARG');
  const ratio = raw === undefined ? 1 : Number(raw);
  if (!Number.isFinite(ratio) || ratio < 0 || ratio > 1) throw new TelemetryConfigError(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1, got "${raw}"`);
  return { kind, ratio };
}

function readAccessLog(read: Read): boolean {
  const raw = read('ACCESS_LOG') ?? 'on';
  if (raw === 'on' || raw === 'true' || raw === '1') return true;
  if (raw === 'off' || raw === 'false' || raw === '0') return false;
  throw new TelemetryConfigError(`ACCESS_LOG must be on or off, got "${raw}"`);
}

/**
 * The standard OpenTelemetry environment. Only OTLP over HTTP with JSON bodies is sent: `http/json`, or
 * `http/protobuf` (the specification's default, accepted because every OTLP/HTTP receiver takes both encodings on
 * the same paths); `grpc` is refused, since a gRPC receiver cannot take HTTP/1.1 requests.
 */
export function readTelemetryConfig(read: Read): TelemetryConfig {
  const accessLog = readAccessLog(read);
  const disabled = read('OTEL_SDK_DISABLED') === 'true';
  const base = read('OTEL_EXPORTER_OTLP_ENDPOINT');
  const tracesEndpoint = read('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const metricsEndpoint = read('OTEL_EXPORTER_OTLP_METRICS_ENDPOINT');
  if (disabled || (base === undefined && tracesEndpoint === undefined && metricsEndpoint === undefined)) return { otlp: null, accessLog };
  const protocol = read('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/json';
  if (protocol !== 'http/json' && protocol !== 'http/protobuf') {
    throw new TelemetryConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/json or http/protobuf (bodies are sent as JSON), got "${protocol}"`);
  }
  const baseUrl = base === undefined ? null : httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', base);
  const endpointOf = (specific: string | undefined, name: string, signalPath: string): string => {
    if (specific !== undefined) return httpUrl(name, specific).href;
    if (baseUrl === null) throw new TelemetryConfigError(`${name} or OTEL_EXPORTER_OTLP_ENDPOINT must be set when the other signal's endpoint is`);
    return signalUrl(baseUrl, signalPath);
  };
  const resourceAttributes = parseKeyValueList('OTEL_RESOURCE_ATTRIBUTES', read('OTEL_RESOURCE_ATTRIBUTES'));
  return {
    accessLog,
    otlp: {
      tracesUrl: endpointOf(tracesEndpoint, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', '/v1/traces'),
      metricsUrl: endpointOf(metricsEndpoint, 'OTEL_EXPORTER_OTLP_METRICS_ENDPOINT', '/v1/metrics'),
      headers: parseKeyValueList('OTEL_EXPORTER_OTLP_HEADERS', read('OTEL_EXPORTER_OTLP_HEADERS')),
      timeoutMs: integerSetting(read, 'OTEL_EXPORTER_OTLP_TIMEOUT', 10_000, 100, 600_000),
      serviceName: read('OTEL_SERVICE_NAME') ?? resourceAttributes['service.name'] ?? 'unigate',
      resourceAttributes,
      sampler: readSampler(read),
      maxQueueSize: integerSetting(read, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1, 1_000_000),
      maxExportBatchSize: integerSetting(read, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1, 100_000),
      scheduleDelayMs: integerSetting(read, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 1, 3_600_000),
      metricIntervalMs: integerSetting(read, 'OTEL_METRIC_EXPORT_INTERVAL', 60_000, 10, 86_400_000),
    },
  };
}
