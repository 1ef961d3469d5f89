import { describe, expect, it } from 'vitest';
import type { Batch, FinishedLine } from '../../../src/domain/batches.js';
import { messageBatchObject, messageBatchResultLine } from '../../../src/http/routes/message-batch-wire.js';

const batch = (extra: Partial<Batch> = {}): Batch => ({
  id: 'msgbatch_1', accountId: 'acc', keyId: 'key', endpoint: '/v1/messages', inputFileId: '', completionWindow: '24h', status: 'in_progress',
  metadata: null, outputFileId: null, errorFileId: null, errors: null, outputExpiresSeconds: null, total: 3, completed: 0, failed: 0, costNano: 0n,
  tokens: { input: 0, cached: 0, output: 0, reasoning: 0 }, createdAt: Date.UTC(2026, 0, 1), expiresAt: Date.UTC(2026, 0, 2), inProgressAt: Date.UTC(2026, 0, 1),
  finalizingAt: null, completedAt: null, failedAt: null, expiredAt: null, cancellingAt: null, cancelledAt: null, ...extra,
});
const counts = { processing: 1, done: 2, failed: 3, cancelled: 4, expired: 5 };
const line = (extra: Partial<FinishedLine>): FinishedLine => ({ line: 1, customId: 'c1', state: 'done', statusCode: 200, requestId: 'req_1', result: null, ...extra });

describe('message batch wire', () => {
  it('answers a running batch without results_url, its counts renamed as Anthropic names them', () => {
    expect(messageBatchObject(batch(), counts, 'http://x/r')).toEqual({
      id: 'msgbatch_1', type: 'message_batch', processing_status: 'in_progress',
      request_counts: { processing: 1, succeeded: 2, errored: 3, canceled: 4, expired: 5 },
      ended_at: null, created_at: '2026-01-01T00:00:00.000Z', expires_at: '2026-01-02T00:00:00.000Z', archived_at: null, cancel_initiated_at: null, results_url: null,
    });
  });

  it('reads canceling while a cancel settles, and ended with results_url once results are written', () => {
    expect(messageBatchObject(batch({ status: 'cancelling', cancellingAt: Date.UTC(2026, 0, 1, 1) }), counts, 'u')).toMatchObject({ processing_status: 'canceling', cancel_initiated_at: '2026-01-01T01:00:00.000Z', results_url: null });
    expect(messageBatchObject(batch({ status: 'finalizing' }), counts, 'u')).toMatchObject({ processing_status: 'in_progress', results_url: null });
    expect(messageBatchObject(batch({ status: 'cancelled', cancelledAt: Date.UTC(2026, 0, 1, 2) }), counts, 'u')).toMatchObject({ processing_status: 'ended', ended_at: '2026-01-01T02:00:00.000Z', results_url: 'u' });
    expect(messageBatchObject(batch({ status: 'expired', expiredAt: Date.UTC(2026, 0, 2) }), counts, 'u')).toMatchObject({ processing_status: 'ended', ended_at: '2026-01-02T00:00:00.000Z' });
  });

  it('writes each result type', () => {
    const message = { id: 'msg_1', type: 'message', content: [] };
    expect(JSON.parse(messageBatchResultLine(line({ result: JSON.stringify(message) })))).toEqual({ custom_id: 'c1', result: { type: 'succeeded', message } });
    const anthropicError = { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } };
    expect(JSON.parse(messageBatchResultLine(line({ state: 'failed', statusCode: 429, result: JSON.stringify(anthropicError) })))).toEqual({ custom_id: 'c1', result: { type: 'errored', error: { ...anthropicError, request_id: 'req_1' } } });
    // An error the runner wrote itself (OpenAI's shape) is told in Anthropic's.
    const runnerError = { error: { message: 'interrupted', type: 'server_error', code: 'batch_line_interrupted' } };
    expect(JSON.parse(messageBatchResultLine(line({ state: 'failed', statusCode: 500, result: JSON.stringify(runnerError) })))).toEqual({
      custom_id: 'c1', result: { type: 'errored', error: { type: 'error', error: { type: 'api_error', message: 'interrupted', code: 'batch_line_interrupted' }, request_id: 'req_1' } },
    });
    expect(JSON.parse(messageBatchResultLine(line({ state: 'cancelled', statusCode: null, requestId: null })))).toEqual({ custom_id: 'c1', result: { type: 'canceled' } });
    expect(JSON.parse(messageBatchResultLine(line({ state: 'expired', statusCode: null, requestId: null })))).toEqual({ custom_id: 'c1', result: { type: 'expired' } });
  });
});
