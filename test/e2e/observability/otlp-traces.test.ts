import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { addRoutedModel, seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { startMockAnthropicUpstream, type MockAnthropicUpstream } from '../../support/mock-anthropic-upstream.js';
import { startMockOpenAIUpstream, type MockOpenAIUpstream } from '../../support/mock-openai-upstream.js';
import { attributeStrings, attributeValue, startOtlpReceiver, type OtlpReceiver, type OtlpSpan } from '../../support/otlp-receiver.js';

const PROMPT = 'PROMPT-TEXT-zq7 tell me about the harbour';
const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

const SERVER = 2;
const CLIENT = 3;
const INTERNAL = 1;

function hexOfTraceparent(header: string | undefined): { traceId: string; spanId: string; flags: string } | null {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(header ?? '');
  return match === null ? null : { traceId: match[1] as string, spanId: match[2] as string, flags: match[3] as string };
}

describe('OpenTelemetry over OTLP/HTTP: spans of a request with its attempts, trace context in and out', () => {
  let receiver: OtlpReceiver;
  let primary: MockOpenAIUpstream;
  let secondary: MockOpenAIUpstream;
  let claude: MockAnthropicUpstream;
  let gateway: TestGateway;
  let account: SeededAccount;
  let client: OpenAI;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    primary = await startMockOpenAIUpstream();
    secondary = await startMockOpenAIUpstream({ apiKey: 'sk-upstream-second' });
    claude = await startMockAnthropicUpstream();
    gateway = await startTestGateway({
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=collector%20secret',
        OTEL_SERVICE_NAME: 'gateway-under-test',
        OTEL_BSP_SCHEDULE_DELAY: '50',
        OTEL_METRIC_EXPORT_INTERVAL: '100',
      },
    });
    await addRoutedModel(gateway, { model: 'traced', channel: { name: 'primary', type: 'openai', base_url: primary.url, api_key: 'sk-upstream-test', models: ['traced'], priority: 10 } });
    await gateway.admin('POST', '/admin/channels', { name: 'secondary', type: 'openai-compatible', base_url: secondary.url, api_key: 'sk-upstream-second', models: ['traced'], priority: 0 });
    await addRoutedModel(gateway, { model: 'traced-claude', channel: { name: 'claude', type: 'anthropic', base_url: claude.url, api_key: 'sk-ant-upstream-test', models: { 'traced-claude': 'claude-sonnet-4-5' } } });
    account = await seedAccount(gateway);
    client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
  });

  beforeEach(() => {
    primary.setFault(null);
    secondary.setFault(null);
  });

  afterAll(async () => {
    await gateway?.close();
    await primary?.close();
    await secondary?.close();
    await claude?.close();
    await receiver?.close();
  });

  const spansOf = (traceId: string): OtlpSpan[] => receiver.spans().filter((span) => span.traceId === traceId);

  it('continues the caller\'s trace: server span, admission, a CLIENT span per attempt (two when the first channel fails), settle', async () => {
    primary.setFault({ kind: 'status', status: 500, times: 1 });
    const { data, response } = await client.chat.completions
      .create({ model: 'traced', messages: [{ role: 'user', content: PROMPT }] }, { headers: { traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01`, tracestate: 'vendor=abc' } })
      .withResponse();
    expect(data.choices[0]?.message.content).toContain('harbour');
    const requestId = response.headers.get('x-request-id');

    await receiver.waitFor(() => spansOf(CALLER_TRACE).some((span) => span.kind === SERVER));
    const spans = spansOf(CALLER_TRACE);
    const server = spans.find((span) => span.kind === SERVER) as OtlpSpan & { resource: [] };
    expect(server.parentSpanId).toBe(CALLER_SPAN);
    expect(server.name).toBe('POST /v1/chat/completions');
    expect(attributeValue(server.attributes, 'http.route')).toBe('/v1/chat/completions');
    expect(attributeValue(server.attributes, 'http.response.status_code')).toBe(200);
    expect(attributeValue(server.attributes, 'unigate.request_id')).toBe(requestId);
    expect(attributeValue(server.attributes, 'gen_ai.operation.name')).toBe('chat');
    expect(attributeValue(server.attributes, 'gen_ai.request.model')).toBe('traced');
    expect(attributeValue(server.attributes, 'gen_ai.usage.input_tokens')).toBe(data.usage?.prompt_tokens);
    expect(attributeValue(server.attributes, 'gen_ai.usage.output_tokens')).toBe(data.usage?.completion_tokens);
    expect(attributeValue(server.attributes, 'unigate.key_id')).toBe(account.keyId);
    expect(attributeValue(server.attributes, 'unigate.attempts')).toBe(2);
    expect(attributeValue(receiver.spans().find((span) => span.spanId === server.spanId)?.resource ?? [], 'service.name')).toBe('gateway-under-test');

    const children = spans.filter((span) => span.parentSpanId === server.spanId);
    const attempts = children.filter((span) => span.kind === CLIENT).sort((left, right) => Number(attributeValue(left.attributes, 'unigate.attempt')) - Number(attributeValue(right.attributes, 'unigate.attempt')));
    expect(attempts).toHaveLength(2);
    const [failed, answered] = attempts as [OtlpSpan, OtlpSpan];
    for (const attempt of attempts) {
      expect(attempt.name).toBe('chat traced');
      expect(attributeValue(attempt.attributes, 'gen_ai.operation.name')).toBe('chat');
      expect(attributeValue(attempt.attributes, 'gen_ai.request.model')).toBe('traced');
      expect(attributeValue(attempt.attributes, 'gen_ai.provider.name')).toBe('openai');
      expect(attributeValue(attempt.attributes, 'server.address')).toBe('127.0.0.1');
    }
    expect(attributeValue(failed.attributes, 'unigate.attempt')).toBe(1);
    expect(attributeValue(failed.attributes, 'unigate.channel_name')).toBe('primary');
    expect(attributeValue(failed.attributes, 'http.response.status_code')).toBe(500);
    expect(attributeValue(failed.attributes, 'error.type')).toBe('server_error');
    expect(failed.status.code).toBe(2);
    expect(attributeValue(failed.attributes, 'server.port')).toBe(primary.port);
    expect(attributeValue(answered.attributes, 'unigate.attempt')).toBe(2);
    expect(attributeValue(answered.attributes, 'unigate.channel_name')).toBe('secondary');
    expect(attributeValue(answered.attributes, 'http.response.status_code')).toBe(200);
    expect(attributeValue(answered.attributes, 'error.type')).toBeUndefined();
    expect(attributeValue(answered.attributes, 'gen_ai.usage.input_tokens')).toBe(data.usage?.prompt_tokens);
    expect(attributeValue(answered.attributes, 'gen_ai.usage.output_tokens')).toBe(data.usage?.completion_tokens);
    expect(children.filter((span) => span.kind === INTERNAL).map((span) => span.name).sort()).toEqual(['admission', 'settle']);

    // Each attempt sent a traceparent naming its own CLIENT span in the caller's trace, and the caller's tracestate.
    const sentFirst = hexOfTraceparent(primary.requests.at(-1)?.headers.traceparent);
    const sentSecond = hexOfTraceparent(secondary.requests.at(-1)?.headers.traceparent);
    expect(sentFirst).toEqual({ traceId: CALLER_TRACE, spanId: failed.spanId, flags: '01' });
    expect(sentSecond).toEqual({ traceId: CALLER_TRACE, spanId: answered.spanId, flags: '01' });
    expect(secondary.requests.at(-1)?.headers.tracestate).toBe('vendor=abc');

    // Exports carry the collector headers; no prompt or answer text and no key material anywhere in them.
    expect(receiver.bodies.every((entry) => entry.headers['x-collector-key'] === 'collector secret')).toBe(true);
    const exported = receiver.bodies.map((entry) => entry.body).join('\n');
    expect(exported).not.toContain('PROMPT-TEXT-zq7');
    expect(exported).not.toContain('harbour');
    expect(exported).not.toContain(account.key);
    expect(exported).not.toContain('sk-upstream');
  });

  it('names the answering model and its finish reasons on the server and attempt spans, on every path', async () => {
    const traced = async (trace: string, send: (headers: Record<string, string>) => Promise<unknown>): Promise<OtlpSpan[]> => {
      await send({ traceparent: `00-${trace}-${CALLER_SPAN}-01` });
      await receiver.waitFor(() => spansOf(trace).some((span) => span.kind === SERVER));
      const spans = spansOf(trace);
      return [spans.find((span) => span.kind === SERVER), spans.find((span) => span.kind === CLIENT)] as OtlpSpan[];
    };
    const cases: Array<{ trace: string; model: string; finish: string[]; send: (headers: Record<string, string>) => Promise<unknown> }> = [
      // Same protocol, whole answer: read off the upstream's body.
      { trace: 'a1'.repeat(16), model: 'traced', finish: ['stop'], send: (headers) => client.chat.completions.create({ model: 'traced', messages: [{ role: 'user', content: 'hi' }] }, { headers }) },
      // Same protocol, streamed: read off the kept first and finish chunks.
      {
        trace: 'a2'.repeat(16), model: 'traced', finish: ['stop'],
        send: async (headers) => {
          const stream = await client.chat.completions.create({ model: 'traced', messages: [{ role: 'user', content: 'hi' }], stream: true }, { headers });
          for await (const chunk of stream) void chunk;
        },
      },
      // Translated from Anthropic, whole and streamed: the upstream's own model name and raw stop reason.
      { trace: 'a3'.repeat(16), model: 'claude-sonnet-4-5', finish: ['end_turn'], send: (headers) => client.chat.completions.create({ model: 'traced-claude', messages: [{ role: 'user', content: 'hi' }] }, { headers }) },
      {
        trace: 'a4'.repeat(16), model: 'claude-sonnet-4-5', finish: ['end_turn'],
        send: async (headers) => {
          const stream = await client.chat.completions.create({ model: 'traced-claude', messages: [{ role: 'user', content: 'hi' }], stream: true }, { headers });
          for await (const chunk of stream) void chunk;
        },
      },
    ];
    for (const { trace, model, finish, send } of cases) {
      const [server, attempt] = (await traced(trace, send)) as [OtlpSpan, OtlpSpan];
      for (const span of [server, attempt]) {
        expect(attributeValue(span.attributes, 'gen_ai.response.model'), trace).toBe(model);
        expect(attributeStrings(span.attributes, 'gen_ai.response.finish_reasons'), trace).toEqual(finish);
      }
    }
  });

  it('starts a trace of its own without caller context, and sends it upstream', async () => {
    const { response } = await client.chat.completions.create({ model: 'traced', messages: [{ role: 'user', content: PROMPT }] }).withResponse();
    const requestId = response.headers.get('x-request-id');
    const sent = hexOfTraceparent(primary.requests.at(-1)?.headers.traceparent);
    expect(sent).not.toBeNull();
    await receiver.waitFor(() => receiver.spans().some((span) => span.kind === SERVER && attributeValue(span.attributes, 'unigate.request_id') === requestId));
    const server = receiver.spans().find((span) => span.kind === SERVER && attributeValue(span.attributes, 'unigate.request_id') === requestId) as OtlpSpan;
    expect(server.parentSpanId).toBeUndefined();
    expect(server.traceId).toBe(sent?.traceId);
    await receiver.waitFor(() => spansOf(server.traceId).some((span) => span.kind === CLIENT));
    expect(spansOf(server.traceId).find((span) => span.kind === CLIENT)?.spanId).toBe(sent?.spanId);
  });

  it('records nothing for a caller that does not sample, and passes its traceparent on unchanged', async () => {
    const unsampled = '0af7651916cd43dd8448eb211c80319c';
    const header = `00-${unsampled}-b7ad6b7169203331-00`;
    await client.chat.completions.create({ model: 'traced', messages: [{ role: 'user', content: 'hello' }] }, { headers: { traceparent: header } });
    expect(primary.requests.at(-1)?.headers.traceparent).toBe(header);
    // A later request's spans arriving shows the exporter ran after this one ended.
    const { response } = await client.chat.completions.create({ model: 'traced', messages: [{ role: 'user', content: 'later' }] }).withResponse();
    const laterId = response.headers.get('x-request-id');
    await receiver.waitFor(() => receiver.spans().some((span) => attributeValue(span.attributes, 'unigate.request_id') === laterId));
    expect(spansOf(unsampled)).toEqual([]);
  });

  it('marks an upstream refusal on the attempt and a caller error without failing the server span', async () => {
    const traceId = 'aaaaaaaaaaaaaaaabbbbbbbbbbbbbbbb';
    const error = await client.chat.completions
      .create({ model: 'traced', messages: [{ role: 'user', content: 'x' }], temperature: 5 }, { headers: { traceparent: `00-${traceId}-cccccccccccccccc-01` } })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    const status = (error as InstanceType<typeof OpenAI.APIError>).status;
    expect(status).toBeGreaterThanOrEqual(400);
    expect(status).toBeLessThan(500);
    await receiver.waitFor(() => spansOf(traceId).some((span) => span.kind === SERVER));
    const server = spansOf(traceId).find((span) => span.kind === SERVER) as OtlpSpan;
    expect(attributeValue(server.attributes, 'http.response.status_code')).toBe(status);
    expect(server.status.code).toBe(0);
  });

  it('exports the GenAI client and server histograms', async () => {
    await client.chat.completions.create({ model: 'traced', messages: [{ role: 'user', content: PROMPT }] });
    await receiver.waitFor(() => {
      const names = new Set(receiver.metrics().map((metric) => metric.name));
      return names.has('gen_ai.client.operation.duration') && names.has('gen_ai.client.token.usage') && names.has('gen_ai.server.request.duration');
    });
    const latest = (name: string) => receiver.metrics().filter((metric) => metric.name === name).at(-1) as ReturnType<OtlpReceiver['metrics']>[number];
    const tokens = latest('gen_ai.client.token.usage');
    expect(tokens.unit).toBe('{token}');
    const types = tokens.dataPoints.map((point) => attributeValue(point.attributes, 'gen_ai.token.type'));
    expect(types).toEqual(expect.arrayContaining(['input', 'output']));
    expect(tokens.dataPoints.some((point) => attributeValue(point.attributes, 'gen_ai.request.model') === 'traced')).toBe(true);
    for (const point of tokens.dataPoints) {
      expect(attributeValue(point.attributes, 'gen_ai.operation.name')).toBe('chat');
      // The client side names the model as sent upstream, with the provider it went to (other tests use a Claude route).
      const upstreamModel = attributeValue(point.attributes, 'gen_ai.request.model');
      expect(upstreamModel === 'traced' ? 'openai' : upstreamModel === 'claude-sonnet-4-5' ? 'anthropic' : upstreamModel).toBe(attributeValue(point.attributes, 'gen_ai.provider.name'));
      expect(Number(point.count)).toBeGreaterThan(0);
      expect(point.bucketCounts.reduce((sum, count) => sum + Number(count), 0)).toBe(Number(point.count));
    }
    const durations = latest('gen_ai.client.operation.duration');
    expect(durations.unit).toBe('s');
    expect(durations.dataPoints.some((point) => attributeValue(point.attributes, 'error.type') === 'server_error')).toBe(true);
    expect(latest('gen_ai.server.request.duration').dataPoints.some((point) => attributeValue(point.attributes, 'gen_ai.request.model') === 'traced')).toBe(true);
  });
});

describe('OpenTelemetry export on shutdown', () => {
  it('sends the spans still queued when the gateway closes', async () => {
    const receiver = await startOtlpReceiver();
    const upstream = await startMockOpenAIUpstream();
    const gateway = await startTestGateway({ env: { OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/custom/traces`, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `${receiver.url}/custom/metrics`, OTEL_BSP_SCHEDULE_DELAY: '600000', OTEL_METRIC_EXPORT_INTERVAL: '600000' } });
    try {
      await addRoutedModel(gateway, { model: 'flushed', channel: { name: 'only', type: 'openai', base_url: upstream.url, api_key: 'sk-upstream-test', models: ['flushed'] } });
      const account = await seedAccount(gateway);
      const client = new OpenAI({ baseURL: gateway.baseURL, apiKey: account.key, maxRetries: 0 });
      await client.chat.completions.create({ model: 'flushed', messages: [{ role: 'user', content: 'hi' }] });
      expect(receiver.bodies).toEqual([]);
      await gateway.close();
      const paths = receiver.bodies.map((entry) => entry.path);
      expect(paths).toContain('/custom/traces');
      expect(paths).toContain('/custom/metrics');
      const spans = receiver.bodies.filter((entry) => entry.path === '/custom/traces').map((entry) => entry.body).join('');
      expect(spans).toContain('"name":"chat flushed"');
    } finally {
      await gateway.close();
      await upstream.close();
      await receiver.close();
    }
  });
});
