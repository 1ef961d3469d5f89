import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/load-config.js';

const load = (env: Record<string, string>) => loadConfig({ DATA_DIR: '/tmp/unigate-telemetry-config', ...env }, '/tmp');

describe('telemetry configuration', () => {
  it('keeps OTLP off and the access log on by default', () => {
    expect(load({}).telemetry).toEqual({ otlp: null, accessLog: true });
    expect(load({ ACCESS_LOG: 'off' }).telemetry.accessLog).toBe(false);
    expect(load({ UNIGATE_ACCESS_LOG: 'on', ACCESS_LOG: 'off' }).telemetry.accessLog).toBe(true);
    expect(() => load({ ACCESS_LOG: 'sometimes' })).toThrow(ConfigError);
  });

  it('derives the signal URLs from the base endpoint, with the standard defaults', () => {
    const { otlp } = load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).telemetry;
    expect(otlp).toEqual({
      tracesUrl: 'http://collector:4318/v1/traces',
      metricsUrl: 'http://collector:4318/v1/metrics',
      headers: {},
      timeoutMs: 10_000,
      serviceName: 'unigate',
      resourceAttributes: {},
      sampler: { kind: 'parentbased_always_on' },
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
      scheduleDelayMs: 5000,
      metricIntervalMs: 60_000,
    });
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/prefix' }).telemetry.otlp?.tracesUrl).toBe('https://otlp.example.com/prefix/v1/traces');
  });

  it('takes per-signal endpoints as they are, headers and resource attributes percent-decoded', () => {
    const { otlp } = load({
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://traces:4318/custom',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%20b,x-tenant = t1',
      OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-resource,deployment.environment=prod',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    }).telemetry;
    expect(otlp).toMatchObject({
      tracesUrl: 'http://traces:4318/custom',
      metricsUrl: 'http://collector:4318/v1/metrics',
      headers: { 'api-key': 'a b', 'x-tenant': 't1' },
      serviceName: 'from-resource',
      resourceAttributes: { 'deployment.environment': 'prod' },
      sampler: { kind: 'parentbased_traceidratio', ratio: 0.25 },
    });
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SERVICE_NAME: 'edge', OTEL_RESOURCE_ATTRIBUTES: 'service.name=x' }).telemetry.otlp?.serviceName).toBe('edge');
  });

  it('turns off with OTEL_SDK_DISABLED', () => {
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).telemetry.otlp).toBeNull();
  });

  it.each([
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://collector' }],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/v1/traces' }],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'novalue' }],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_HEADERS: 'k=%zz' }],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_SAMPLER: 'sometimes' }],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_BSP_MAX_QUEUE_SIZE: '0' }],
  ])('refuses %j with a clear error', (env) => {
    expect(() => load(env)).toThrow(ConfigError);
  });

  it('accepts http/protobuf (bodies go as JSON, which every OTLP/HTTP receiver takes)', () => {
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }).telemetry.otlp).not.toBeNull();
  });
});
