/**
 * The transport limits of realtime sessions: connect-time failover, message size, idle and maximum durations,
 * backpressure from a caller that stops reading, a caller that leaves mid-response (billed for what the upstream
 * reports), and a draining instance that ends its sessions with the protocol's own close.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
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

/** Waits (up to 10 s) until `condition` holds. */
async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !(await condition());) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

// Each test starts its own gateway (on PostgreSQL a new database and its migrations): seconds on a loaded machine.
describe('realtime transport', { timeout: 60_000 }, () => {
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
    // The upstream socket is closed too: waited for, as a loaded machine may take longer than a fixed pause.
    await expect.poll(() => upstream?.readyState, { timeout: 10_000, interval: 20 }).toBe(upstream?.CLOSED);
  });

  it('ends an idle session with an error event and close 1000', async () => {
    const current = await start({ REALTIME_IDLE_SECONDS: '1' });
    const account = await newAccount(current);
    const session = await openRaw(current.url, { key: account.key });
    const error = await session.next('error', 20_000);
    expect(error).toMatchObject({ error: { type: 'invalid_request_error', code: 'session_idle_timeout' } });
    expect((await session.closed).code).toBe(1000);
    // A session without a response is on record with no charge.
    const rows = await usageRows(current, account);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ cost_usd: 0, endpoint: '/v1/realtime', request_id: session.requestId });
    // Found by the session's id, the handshake's x-request-id.
    const bySession = await current.gateway.admin<{ data: Array<{ request_id: string }> }>('GET', `/admin/usage?session_id=${session.requestId ?? ''}`);
    expect(bySession.body.data.map((row) => row.request_id)).toEqual([session.requestId]);
  });

  it('ends a session at REALTIME_MAX_SESSION_SECONDS however busy it is', async () => {
    const current = await start({ REALTIME_MAX_SESSION_SECONDS: '1' });
    const account = await newAccount(current);
    const session = await openRaw(current.url, { key: account.key });
    const busy = setInterval(() => session.send({ type: 'input_audio_buffer.clear' }), 100);
    try {
      const error = await session.next('error', 20_000);
      expect(error).toMatchObject({ error: { code: 'session_expired' } });
      expect((await session.closed).code).toBe(1000);
    } finally {
      clearInterval(busy);
    }
  });

  it('bills a response the gateway cut at the maximum duration at what the upstream reports for it', async () => {
    // 200 deltas 20 ms apart: the response is still being written when the session's second is up.
    const current = await start({ REALTIME_MAX_SESSION_SECONDS: '1' }, { deltas: 200, deltaDelayMs: 20 });
    const account = await newAccount(current);
    const before = await balanceNano(current, account);
    const session = await openRaw(current.url, { key: account.key });
    session.send({ type: 'response.create' });
    await session.next('response.output_audio.delta');
    const error = await session.next('error', 20_000);
    expect(error).toMatchObject({ error: { code: 'session_expired' } });
    expect((await session.closed).code).toBe(1000);
    expect(session.events.some((event) => event.type === 'response.done')).toBe(false);
    const upstream = current.upstream.connections.at(-1);
    await until(() => upstream?.socket.readyState === upstream?.socket.CLOSED, 'the upstream closed');
    expect(upstream?.received).toContain('response.cancel');
    const usage = current.upstream.usages.at(-1);
    if (usage === undefined) throw new Error('no usage');
    expect(usage.output_tokens).toBeGreaterThan(0);
    const rows = await usageRows(current, account);
    expect(rows).toHaveLength(1);
    expect(rows[0]?.error_code).toBe('response_cancelled');
    expect(before - (await balanceNano(current, account))).toBe(responseCostNano(usage));
  });

  it('pings both sides every REALTIME_PING_SECONDS and ends a session whose caller or upstream stops answering', async () => {
    const current = await start({ REALTIME_PING_SECONDS: '1' });
    const account = await newAccount(current);
    // A caller that answers pings hears them and keeps its session.
    const answering = await openRaw(current.url, { key: account.key });
    await answering.next('session.created');
    let pings = 0;
    answering.socket.on('ping', () => (pings += 1));
    // A caller that stops answering pings is cut, and its upstream closed with it.
    const silent = new WebSocket(current.url, { headers: { authorization: `Bearer ${account.key}` }, autoPong: false });
    const silentClosed = new Promise<number>((resolve) => silent.once('close', (code) => resolve(code)));
    await new Promise((resolve, reject) => silent.once('open', resolve).once('error', reject));
    const silentUpstream = current.upstream.connections.at(-1)?.socket;
    expect(await silentClosed).toBe(1006);
    await until(() => silentUpstream?.readyState === silentUpstream?.CLOSED, 'the silent caller\'s upstream closed');
    // An upstream that stops answering (its socket no longer read) is cut, and its caller told so.
    const stranded = await openRaw(current.url, { key: account.key });
    await stranded.next('session.created');
    const deadUpstream = current.upstream.connections.at(-1)?.socket;
    deadUpstream?.pause();
    expect(await stranded.closed).toEqual({ code: 1011, reason: 'upstream connection lost' });
    deadUpstream?.resume();
    expect(pings).toBeGreaterThanOrEqual(2);
    expect(answering.socket.readyState).toBe(answering.socket.OPEN);
    answering.send({ type: 'response.create' });
    await answering.next('response.done');
    answering.socket.close();
    await answering.closed;
  });

  it('stops reading the upstream while a caller does not read, then delivers everything in order', async () => {
    const deltas = 400;
    const current = await start({ REALTIME_BUFFER_BYTES: '65536' }, { deltas, deltaBytes: 96_000 });
    const account = await newAccount(current);
    const session = await openRaw(current.url, { key: account.key });
    await session.next('session.created');
    session.socket.pause();
    session.send({ type: 'response.create' });
    const upstream = current.upstream.connections.at(-1)?.socket;
    // About 51 MB are sent; what the gateway has not read waits in the upstream's own queue, not in the gateway.
    await until(() => (upstream?.bufferedAmount ?? 0) > 25_000_000, 'the upstream\'s queue to hold more than 25 MB');
    session.socket.resume();
    await session.next('response.done', 45_000);
    const audio = session.events.filter((event) => event.type === 'response.output_audio.delta');
    expect(audio).toHaveLength(deltas);
    expect(session.events.filter((event) => event.type === 'response.output_audio_transcript.delta').map((event) => event.delta)).toEqual(Array.from({ length: deltas }, (_, index) => `word${index} `));
    session.socket.close();
    await session.closed;
  }, 60_000);

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

  it('bills a session the upstream cut for the responses it reported, gives the rest back, and keeps it off the other channel', async () => {
    const current = await start({}, {}, 2);
    const account = await newAccount(current, 20, { concurrency: 1, quota_usd: 10 });
    const before = await balanceNano(current, account);
    const session = await openRaw(current.url, { key: account.key });
    await session.next('session.created');
    const connectionsAtOpen = current.upstream.connections.length;
    const upstream = current.upstream.connections.at(-1);
    if (upstream === undefined) throw new Error('no upstream');
    for (let index = 0; index < 2; index += 1) {
      session.send({ type: 'response.create' });
      await session.next('response.done');
    }
    const reported = current.upstream.usages.slice(-2);
    // The third response is cut by the upstream midway, before it reported anything for it.
    current.upstream.setOptions({ deltas: 50, deltaDelayMs: 20 });
    const sentAt = session.events.length;
    session.send({ type: 'response.create' });
    await until(() => session.events.slice(sentAt).some((event) => event.type === 'response.output_audio.delta'), 'a delta of the third response');
    const heldDuringResponse = (await current.gateway.gateway.services.ledger.keyHolds(account.accountId))(account.keyId).capHeldNano;
    expect(heldDuringResponse).toBeGreaterThan(0n);
    upstream.socket.close(1011, 'upstream failure');
    // The caller hears the upstream's code and reason; the session does not move to the other channel.
    expect(await session.closed).toEqual({ code: 1011, reason: 'upstream failure' });
    expect(current.upstream.connections).toHaveLength(connectionsAtOpen);
    const rows = await usageRows(current, account);
    expect(rows).toHaveLength(2);
    expect(before - (await balanceNano(current, account))).toBe(reported.reduce((sum, usage) => sum + responseCostNano(usage), 0n));
    // The third response's hold goes back and the session's concurrency slot is free again.
    await until(async () => (await current.gateway.gateway.services.ledger.keyHolds(account.accountId))(account.keyId).capHeldNano === 0n, 'the hold given back');
    const next = await openRaw(current.url, { key: account.key });
    await next.next('session.created');
    next.socket.close();
    await next.closed;
  });

  it('ends its sessions with an error event and close 1001 when the instance drains', async () => {
    // Three seconds of drain: an idle session ends at once, and by the realtime deadline (half a second before the
    // drain's end) at the latest, with room for a loaded machine's late timers.
    const current = await start({ DRAIN_SECONDS: '3' });
    const account = await newAccount(current);
    const session = await openRaw(current.url, { key: account.key });
    await session.next('session.created');
    const startedAt = Date.now();
    const closing = current.gateway.close();
    const error = await session.next('error', 5000);
    expect(error).toMatchObject({ error: { type: 'server_error', code: 'server_shutting_down' } });
    expect((await session.closed).code).toBe(1001);
    expect(Date.now() - startedAt).toBeLessThan(2500);
    await closing;
  });
});
