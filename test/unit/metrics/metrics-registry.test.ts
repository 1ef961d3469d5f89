/** The Prometheus registry and the request labels: text format, cumulative buckets, escaping, bounded labels. */
import { describe, expect, it } from 'vitest';
import { GatewayMetrics, LATENCY_BUCKETS_SECONDS } from '../../../src/metrics/gateway-metrics.js';
import { apiRouteLabels as routeLabels } from '../../../src/http/routes/api-routes.js';
import { MetricsRegistry } from '../../../src/metrics/metrics-registry.js';

describe('MetricsRegistry', () => {
  it('renders counters with their labels, one series per label set', () => {
    const registry = new MetricsRegistry();
    const counter = registry.counter('things_total', 'Things.', ['kind', 'status']);
    counter.labels('a', 200).inc();
    counter.labels('a', 200).inc(2);
    counter.labels('b', 500).inc();
    expect(counter.labels('a', 200)).toBe(counter.labels('a', 200));
    expect(registry.render()).toBe([
      '# HELP things_total Things.',
      '# TYPE things_total counter',
      'things_total{kind="a",status="200"} 3',
      'things_total{kind="b",status="500"} 1',
      '',
    ].join('\n'));
  });

  it('renders histograms with cumulative buckets, +Inf, sum and count', () => {
    const registry = new MetricsRegistry();
    const histogram = registry.histogram('latency_seconds', 'Latency.', [], [0.1, 1]);
    for (const value of [0.05, 0.1, 0.5, 3]) histogram.labels().observe(value);
    expect(registry.render().split('\n')).toEqual([
      '# HELP latency_seconds Latency.',
      '# TYPE latency_seconds histogram',
      'latency_seconds_bucket{le="0.1"} 2',
      'latency_seconds_bucket{le="1"} 3',
      'latency_seconds_bucket{le="+Inf"} 4',
      'latency_seconds_sum 3.65',
      'latency_seconds_count 4',
      '',
    ]);
  });

  it('escapes label values and refuses bad names, duplicates and wrong label counts', () => {
    const registry = new MetricsRegistry();
    registry.gauge('g', 'G.', ['name']).labels('a "quoted"\\ name\nnext').set(1);
    expect(registry.render()).toContain('g{name="a \\"quoted\\"\\\\ name\\nnext"} 1');
    expect(() => registry.gauge('g', 'again')).toThrow(/twice/);
    expect(() => registry.counter('bad-name', 'x')).toThrow(/invalid/);
    expect(() => registry.counter('two_labels', 'x', ['a', 'b']).labels('only-one')).toThrow(/label values/);
    expect(() => registry.histogram('h', 'x', [], [1, 1])).toThrow(/increase/);
  });

  it('collects gauges when scraped', () => {
    const registry = new MetricsRegistry();
    let value = 1;
    registry.collected('live', 'Live.', ['x'], () => [{ labels: ['y'], value }]);
    expect(registry.render()).toContain('live{x="y"} 1');
    value = 2;
    expect(registry.render()).toContain('live{x="y"} 2');
  });
});

describe('GatewayMetrics', () => {
  it('registers every documented metric, latency buckets from 5 ms to 120 s', () => {
    const metrics = new GatewayMetrics(() => [{ channel: 'primary', model: 'gpt', state: 'open' }]);
    metrics.requests.labels('openai', 'chat.completions', 200).inc();
    metrics.requestDuration.labels('openai', 'chat.completions').observe(0.02);
    metrics.timeToFirstByte.labels('openai', 'true').observe(0.01);
    metrics.upstreamAttempts.labels('primary', 'success').inc();
    metrics.upstreamErrors.labels('primary', 'server_error').inc();
    metrics.retries.inc();
    metrics.inFlight.inc();
    const text = metrics.render();
    for (const name of ['unigate_requests_total', 'unigate_request_duration_seconds', 'unigate_time_to_first_byte_seconds', 'unigate_upstream_attempts_total', 'unigate_retries_total', 'unigate_upstream_errors_total', 'unigate_breaker_state', 'unigate_in_flight_requests']) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(text).toContain('unigate_breaker_state{channel="primary",model="gpt"} 2');
    expect(text).toContain('unigate_retries_total 1');
    expect(LATENCY_BUCKETS_SECONDS[0]).toBe(0.005);
    expect(LATENCY_BUCKETS_SECONDS.at(-1)).toBe(120);
  });
});

describe('routeLabels', () => {
  it.each([
    ['/v1/chat/completions', 'openai', 'chat.completions'],
    ['/v1/embeddings', 'openai', 'embeddings'],
    ['/v1/responses', 'openai', 'responses'],
    ['/v1/responses/input_tokens', 'openai', 'responses.input_tokens'],
    ['/v1/images/edits', 'openai', 'images.edits'],
    ['/v1/audio/transcriptions', 'openai', 'audio.transcriptions'],
    ['/v1/audio/speech', 'openai', 'audio.speech'],
    ['/v1/moderations', 'openai', 'moderations'],
    ['/v1/responses/resp_123', 'openai', 'responses.stored'],
    ['/v1/responses/resp_123/input_items', 'openai', 'responses.stored'],
    ['/v1/models', 'openai', 'models'],
    ['/v1/models/gpt-4o', 'openai', 'models'],
    ['/v1/messages', 'anthropic', 'messages'],
    ['/v1/messages/count_tokens', 'anthropic', 'count_tokens'],
    ['/v1beta/models/gemini-2.5-flash:streamGenerateContent', 'gemini', 'streamGenerateContent'],
    ['/v1/models/gemini-2.5-flash:generateContent', 'gemini', 'generateContent'],
    ['/v1beta/models/x:somethingElse', 'gemini', 'models'],
    ['/v1beta/models/gemini-2.5-flash', 'gemini', 'models'],
    ['/v1/models/gemini-2.5-flash:embedContent', 'gemini', 'embedContent'],
    ['/healthz', 'probe', 'healthz'],
    ['/v1beta/models', 'gemini', 'models'],
    ['/api/status', 'public', 'status'],
    ['/admin/channels/ch_1/health', 'admin', 'admin'],
    ['/metrics', 'admin', 'metrics'],
    ['/wp-login.php', 'other', 'other'],
  ])('%s → %s %s', (path, protocol, endpoint) => {
    expect(routeLabels(path)).toMatchObject({ protocol, endpoint });
  });

  it.each([
    ['/v1/chat/completions', '/v1/chat/completions'],
    ['/v1/models/gpt-4o', '/v1/models/{model}'],
    ['/v1/responses/resp_123/input_items', '/v1/responses/{id}/input_items'],
    ['/v1beta/models/gemini-2.5-flash:streamGenerateContent', '/v1beta/models/{model}:streamGenerateContent'],
    ['/v1/models/gemini-2.5-flash:generateContent', '/v1/models/{model}:generateContent'],
    ['/admin/channels/ch_1/health', '/admin/*'],
    ['/wp-login.php', null],
  ])('%s has the route template %s', (path, route) => {
    expect(routeLabels(path).route).toBe(route);
  });
});
