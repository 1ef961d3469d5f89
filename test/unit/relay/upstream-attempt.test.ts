import { describe, expect, it } from 'vitest';
import type { RelayDependencies } from '../../../src/relay/relay-dependencies.js';
import { AttemptLog } from '../../../src/relay/attempt-log.js';
import { readingAnswer, UpstreamAttempt } from '../../../src/relay/upstream-attempt.js';
import type { Candidate } from '../../../src/routing/route-plan.js';
import type { OtelPipeline } from '../../../src/telemetry/otel-pipeline.js';
import type { RequestObservation } from '../../../src/telemetry/request-observation.js';
import type { AttributeValue, Span, SpanKind } from '../../../src/telemetry/span.js';

/** A span that records what the attempt set on it. */
class RecordedSpan implements Span {
  readonly attributes: Record<string, AttributeValue> = {};
  status: 'unset' | 'error' = 'unset';
  readonly traceState = null;

  constructor(
    private readonly ended: RecordedSpan[],
    readonly kind: SpanKind,
    readonly traceId: string,
    readonly spanId: string,
  ) {}

  set(key: string, value: AttributeValue | null | undefined): this {
    if (value !== null && value !== undefined) this.attributes[key] = value;
    return this;
  }

  fail(errorType: string): this {
    this.status = 'error';
    this.attributes['error.type'] = errorType;
    return this;
  }

  end(): void {
    if (!this.ended.includes(this)) this.ended.push(this);
  }
}

/** An attempt wired to recording fakes: the spans it ended, the outcomes it counted, the verdicts its ticket got. */
function recordedAttempt() {
  const ended: RecordedSpan[] = [];
  const outcomes: string[] = [];
  const verdicts: string[] = [];
  const server = new RecordedSpan(ended, 'server', 'a'.repeat(32), 'b'.repeat(16));
  const pipeline = {
    startChild: (parent: Span, _name: string, kind: SpanKind) => new RecordedSpan(ended, kind, parent.traceId, 'c'.repeat(16)),
    recordClientDuration: () => undefined,
    recordClientTokens: () => undefined,
  } as unknown as OtelPipeline;
  const observation = { pipeline, startSpan: (name: string, kind: SpanKind) => pipeline.startChild(server, name, kind), upstreamHeaders: () => null };
  const attempts = new AttemptLog({ requestId: 'req_1', accountId: 'acc_1', keyId: 'key_1', protocol: 'openai-chat', modelId: 'gpt-test', promptTokensEstimate: 0, startedAt: performance.now(), observation: observation as unknown as RequestObservation });
  const dependencies = {
    metrics: { retries: { inc: () => undefined }, upstreamAttempts: { labels: (_channel: string, outcome: string) => ({ inc: () => outcomes.push(outcome) }) }, upstreamErrors: { labels: () => ({ inc: () => undefined }) } },
    logger: { warn: () => undefined },
  } as unknown as RelayDependencies;
  const candidate = {
    attempt: 1,
    route: { channel: { id: 'ch_1', name: 'primary', type: 'openai' }, upstreamModel: 'gpt-test' },
    ticket: { release: () => verdicts.push('none'), succeeded: () => verdicts.push('succeeded'), failed: () => verdicts.push('failed'), answered: () => undefined },
    tokenCharge: null,
  } as unknown as Candidate;
  const attempt = new UpstreamAttempt(dependencies, candidate, 'sk-upstream', 'req_1', attempts);
  attempt.sending('http://127.0.0.1:9/v1/chat/completions');
  attempt.upstreamStatus(200);
  return { attempt, ended, outcomes, verdicts };
}

describe('an upstream attempt whose answer could not be read', () => {
  it('ends its CLIENT span failed and gives the channel no verdict when reading the 2xx answer throws', async () => {
    const { attempt, ended, outcomes, verdicts } = recordedAttempt();
    await expect(readingAnswer(attempt, () => Promise.reject(new Error('encoder bug')))).rejects.toThrow('encoder bug');
    expect(ended).toHaveLength(1);
    expect(ended[0]?.kind).toBe('client');
    expect(ended[0]?.status).toBe('error');
    expect(ended[0]?.attributes['error.type']).toBe('internal_error');
    expect(ended[0]?.attributes['http.response.status_code']).toBe(200);
    expect(outcomes).toEqual(['error']);
    expect(verdicts).toEqual(['none']);
  });

  it('keeps the verdict it already had when the error comes after it', async () => {
    const { attempt, ended, outcomes, verdicts } = recordedAttempt();
    await expect(readingAnswer(attempt, async () => {
      attempt.succeeded();
      throw new Error('after the answer');
    })).rejects.toThrow('after the answer');
    expect(ended).toHaveLength(1);
    expect(ended[0]?.status).toBe('unset');
    expect(outcomes).toEqual(['success']);
    expect(verdicts).toEqual(['succeeded']);
  });
});
