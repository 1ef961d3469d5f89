/**
 * The transport limits of realtime sessions: connect-time failover, message size, idle and maximum durations,
 * backpressure from a caller that stops reading, a caller that leaves mid-response (billed for what the upstream
 * reports), and a draining instance that ends its sessions with the protocol's own close.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { balanceNano, newAccount, openRaw, responseCostNano, startRealtimeSetup, usageRows, type RealtimeSetup } from './realtime-support.js';

let setup: RealtimeSetup | null = null;

afterEach(async () => {
  await setup?.close();
  setup = null;
});

async function start(env: Record<string, string> = {}, mock: Parameters<typeof startRealtimeSetup>[1] = {}, channels = 1): Promise<RealtimeSetup> {
  setup = await startRealtimeSetup(env, mock, channels);
  return setup;
}

describe('realtime transport', () => {
  it('fails over at connect time to the next channel, and answers 502 when every channel fails', async () => {
    const current = await start({}, {}, 2);
    const account = await newAccount(current);
    current.upstream.setFault({ kind: 'status', status: 500, times: 1 });
    const session = await openRaw(current.url, { key: account.key });
    await session.next('session.created');
    session.socket.close();
    await session.closed;
    current.upstream.setFault({ kind: 'status', status: 503, times: 10 });
    const refused = await openRaw(current.url, { key: account.key }).then(() => null, (error: { status: number; body: { error: { code: string } } }) => [error.status, error.body.error.code]);
    expect(refused?.[1]).toBe('upstream_error');
    expect([502, 503]).toContain(refused?.[0]);
  });

  it('closes with 1009 a caller message over REALTIME_MAX_MESSAGE_BYTES, and its upstream too', async () => {
    const current = await start({ REALTIME_MAX_MESSAGE_BYTES: '65536' });
    const account = await newAccount(current);
    const session = await openRaw(current.url, { key: account.key });
    await session.next('session.created');
    const upstream = current.upstream.connections.at(-1)?.socket;
    session.send({ type: 'input_audio_buffer.append', audio: Buffer.alloc(100_000).toString('base64') });
    expect((await session.closed).code).toBe(1009);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(upstream?.readyState).toBe(upstream?.CLOSED);
  });

  it('ends an idle session with an error event and close 1000', async () => {
    const current = await start({ REALTIME_IDLE_SECONDS: '1' });
    const account = await newAccount(current);
    const session = await openRaw(current.url, { key: account.key });
    const error = await session.next('error', 5000);
    expect(error).toMatchObject({ error: { type: 'invalid_request_error', code: 'session_idle_timeout' } });
    expect((await session.closed).code).toBe(1000);
    // A session without a response is on record with no charge.
    const rows = await usageRows(current, account);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ cost_usd: 0, endpoint: '/v1/realtime' });
  });

  it('ends a session at REALTIME_MAX_SESSION_SECONDS however busy it is', async () => {
    const current = await start({ REALTIME_MAX_SESSION_SECONDS: '1' });
    const account = await newAccount(current);
    const session = await openRaw(current.url, { key: account.key });
    const busy = setInterval(() => session.send({ type: 'input_audio_buffer.clear' }), 100);
    try {
      const error = await session.next('error', 5000);
      expect(error).toMatchObject({ error: { code: 'session_expired' } });
      expect((await session.closed).code).toBe(1000);
    } finally {
      clearInterval(busy);
    }
  });

  it('stops reading the upstream while a caller does not read, then delivers everything in order', async () => {
    const deltas = 400;
    const current = await start({ REALTIME_BUFFER_BYTES: '65536' }, { deltas, deltaBytes: 96_000 });
    const account = await newAccount(current);
    const session = await openRaw(current.url, { key: account.key });
    await session.next('session.created');
    session.socket.pause();
    session.send({ type: 'response.create' });
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const upstream = current.upstream.connections.at(-1)?.socket;
    // About 51 MB were sent; what the gateway has not read waits in the upstream's own queue, not in the gateway.
    expect(upstream?.bufferedAmount ?? 0).toBeGreaterThan(25_000_000);
    session.socket.resume();
    await session.next('response.done', 30_000);
    const audio = session.events.filter((event) => event.type === 'response.output_audio.delta');
    expect(audio).toHaveLength(deltas);
    expect(session.events.filter((event) => event.type === 'response.output_audio_transcript.delta').map((event) => event.delta)).toEqual(Array.from({ length: deltas }, (_, index) => `word${index} `));
    session.socket.close();
    await session.closed;
  });

  it('bills a response the caller cut off at what the upstream reports for it', async () => {
    const current = await start({}, { deltas: 50, deltaDelayMs: 20 });
    const account = await newAccount(current);
    const before = await balanceNano(current, account);
    const session = await openRaw(current.url, { key: account.key });
    await session.next('session.created');
    session.send({ type: 'response.create' });
    await session.next('response.output_audio.delta');
    session.socket.close();
    await session.closed;
    const upstream = current.upstream.connections.at(-1);
    for (let waited = 0; upstream?.socket.readyState !== upstream?.socket.CLOSED && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(upstream?.received).toContain('response.cancel');
    const usage = current.upstream.usages.at(-1);
    if (usage === undefined) throw new Error('no usage');
    expect(usage.output_tokens).toBeGreaterThan(0);
    const rows = await usageRows(current, account);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.error_code).toBe('response_cancelled');
    expect(before - (await balanceNano(current, account))).toBe(responseCostNano(usage));
  });

  it('ends its sessions with an error event and close 1001 when the instance drains', async () => {
    const current = await start({ DRAIN_SECONDS: '1' });
    const account = await newAccount(current);
    const session = await openRaw(current.url, { key: account.key });
    await session.next('session.created');
    const startedAt = Date.now();
    const closing = current.gateway.close();
    const error = await session.next('error', 5000);
    expect(error).toMatchObject({ error: { type: 'server_error', code: 'server_shutting_down' } });
    expect((await session.closed).code).toBe(1001);
    expect(Date.now() - startedAt).toBeLessThan(1000);
    await closing;
  });
});
