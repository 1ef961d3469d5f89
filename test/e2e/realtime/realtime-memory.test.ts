/**
 * The memory a realtime session costs the gateway, measured in a real `unigate serve` process (live heap, external
 * buffers and RSS after full collections): two hundred idle sessions held open at once stay under a stated budget per
 * session and give it back when they end; a caller that stops reading while the upstream streams megabytes of audio
 * makes the gateway stop reading the upstream (the bytes wait in the upstream's queue, not the gateway's), and a caller
 * that never reads again is ended by the idle limit with its upstream closed.
 */
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { openRaw, type RawSession } from './realtime-support.js';
import { startRealtimeProcess, type MemorySample, type RealtimeProcess } from './realtime-process.js';

const SESSIONS = 200;
/**
 * What one idle session may cost the gateway in live heap plus buffers outside it: the caller's and the upstream's
 * sockets (ws state, TLS-free TCP handles), the session's timers, its admission and billing state. Measured at about
 * 17 KiB here; the budget leaves room for a busier machine, not for a buffer per session.
 */
const IDLE_SESSION_BUDGET_BYTES = 64 * 1024;
/**
 * Resident memory per idle session (the heap's pages plus what the heap budget does not count, such as socket handles):
 * about 6–26 KiB measured, but V8 keeps pages it grew into while other test files load the machine, so the bound is loose.
 */
const IDLE_SESSION_RSS_BUDGET_BYTES = 256 * 1024;
/** REALTIME_BUFFER_BYTES for the slow-reader test. */
const BUFFER_BYTES = 1024 * 1024;
/**
 * What a stalled caller may make the gateway hold: its queue toward the caller (BUFFER_BYTES plus one frame of about
 * 128 KiB of base64 audio), what the upstream's socket had read before it was paused, and the parser's chunks. The
 * upstream streams about 90 MB meanwhile; about 2 MiB was measured.
 */
const STALLED_GROWTH_BYTES = 6 * 1024 * 1024;

let gateway: RealtimeProcess | null = null;

afterEach(async () => {
  await gateway?.close();
  gateway = null;
});

const kib = (bytes: number): string => (bytes / 1024).toFixed(1);
const live = (sample: MemorySample): number => sample.heapUsed + sample.external;

async function openSessions(url: string, key: string, count: number): Promise<RawSession[]> {
  const sessions: RawSession[] = [];
  // In batches, as callers arrive: the point is holding them, not a connect storm.
  for (let at = 0; at < count; at += 20) {
    const batch = await Promise.all(Array.from({ length: Math.min(20, count - at) }, async () => {
      const session = await openRaw(url, { key });
      await session.next('session.created');
      return session;
    }));
    sessions.push(...batch);
  }
  return sessions;
}

async function closeSessions(sessions: RawSession[]): Promise<void> {
  for (const session of sessions) session.socket.close();
  await Promise.all(sessions.map((session) => session.closed));
}

function openUpstreams(current: RealtimeProcess): number {
  return current.upstream.connections.filter((connection) => connection.socket.readyState === WebSocket.OPEN).length;
}

async function waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Memory once the gateway has finished with what just ended: closing sessions leaves work behind it (their usage rows
 * and charges, written in batches), and a loaded machine is still doing it when the last upstream closes. Samples until
 * two in a row, a quarter second apart, differ by less than a session's share of the bound below.
 */
async function quietMemory(current: RealtimeProcess): Promise<MemorySample> {
  let previous = await current.memory();
  for (let attempt = 0; attempt < 40; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const sample = await current.memory();
    if (Math.abs(live(sample) - live(previous)) < IDLE_SESSION_BUDGET_BYTES) return sample;
    previous = sample;
  }
  return previous;
}

describe('realtime session memory in the gateway process', () => {
  it(`holds ${SESSIONS} idle sessions within ${kib(IDLE_SESSION_BUDGET_BYTES)} KiB of live memory each, and gives it back`, async () => {
    gateway = await startRealtimeProcess({});
    const current = gateway;
    // Warm up the paths a session takes (JIT, pools, the first usage rows) before the baseline.
    await closeSessions(await openSessions(current.url, current.key, 20));
    await waitFor(() => openUpstreams(current) === 0, 10_000, 'warm-up upstreams closed');
    const baseline = await quietMemory(current);
    const sessions = await openSessions(current.url, current.key, SESSIONS);
    await waitFor(() => openUpstreams(current) === SESSIONS, 10_000, `${SESSIONS} upstreams open`);
    // Idle, as a voice session waiting for its user is: a few ping rounds would change nothing measured here.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const held = await current.memory();
    expect(sessions.every((session) => session.socket.readyState === WebSocket.OPEN)).toBe(true);
    const perSession = (live(held) - live(baseline)) / SESSIONS;
    const rssPerSession = (held.rss - baseline.rss) / SESSIONS;
    console.log(`${SESSIONS} idle sessions: live heap+external ${kib(live(baseline))} → ${kib(live(held))} KiB (${kib(perSession)} KiB a session), RSS ${kib(baseline.rss)} → ${kib(held.rss)} KiB (${kib(rssPerSession)} KiB a session)`);
    expect(perSession, 'live memory a session').toBeLessThan(IDLE_SESSION_BUDGET_BYTES);
    expect(rssPerSession, 'resident memory a session').toBeLessThan(IDLE_SESSION_RSS_BUDGET_BYTES);
    await closeSessions(sessions);
    await waitFor(() => openUpstreams(current) === 0, 10_000, 'upstreams closed');
    const after = await quietMemory(current);
    // A second round of as many sessions leaves nothing more behind than the first did: nothing of an ended session
    // stays reachable (the first round's remainder is caches that fill once, such as usage batches and pools).
    await closeSessions(await openSessions(current.url, current.key, SESSIONS));
    await waitFor(() => openUpstreams(current) === 0, 10_000, 'second round upstreams closed');
    const again = await quietMemory(current);
    console.log(`after the sessions ended: live heap+external ${kib(live(after))} KiB; after a second round ${kib(live(again))} KiB`);
    expect(live(again) - live(after)).toBeLessThan(16 * IDLE_SESSION_BUDGET_BYTES);
  }, 120_000);

  it('stops reading the upstream while a caller stops reading, and holds no more than its buffer bound', async () => {
    gateway = await startRealtimeProcess({ REALTIME_BUFFER_BYTES: String(BUFFER_BYTES) }, { deltas: 700, deltaBytes: 96_000 });
    const current = gateway;
    const warm = await openRaw(current.url, { key: current.key });
    await warm.next('session.created');
    current.upstream.setOptions({ deltas: 2, deltaBytes: 96_000 });
    warm.send({ type: 'response.create' });
    await warm.next('response.done');
    warm.socket.close();
    await warm.closed;
    const baseline = await current.memory();
    current.upstream.setOptions({ deltas: 700, deltaBytes: 96_000 });

    const session = await openRaw(current.url, { key: current.key });
    await session.next('session.created');
    session.socket.pause();
    session.send({ type: 'response.create' });
    const upstream = current.upstream.connections.at(-1)?.socket;
    // The mock writes 700 deltas of 128 KB of base64 (about 90 MB); what the gateway does not take waits in the mock.
    await waitFor(() => (upstream?.bufferedAmount ?? 0) > 60_000_000, 20_000, 'the upstream queue to fill');
    const stalled = await current.memory();
    const growth = live(stalled) - live(baseline);
    console.log(`caller stalled: upstream holds ${kib(upstream?.bufferedAmount ?? 0)} KiB; gateway live heap+external grew ${kib(growth)} KiB, RSS ${kib(stalled.rss - baseline.rss)} KiB`);
    expect(growth).toBeLessThan(STALLED_GROWTH_BYTES);
    expect(stalled.rss - baseline.rss).toBeLessThan(4 * STALLED_GROWTH_BYTES);
    // Once the caller reads again, everything arrives, in order.
    session.socket.resume();
    await session.next('response.done', 60_000);
    const transcript = session.events.filter((event) => event.type === 'response.output_audio_transcript.delta').map((event) => event.delta);
    expect(transcript).toEqual(Array.from({ length: 700 }, (_, index) => `word${index} `));
    session.socket.close();
    await session.closed;
  }, 120_000);

  it('ends a session whose caller never reads again at the idle limit, closing its upstream', async () => {
    gateway = await startRealtimeProcess({ REALTIME_BUFFER_BYTES: String(BUFFER_BYTES), REALTIME_IDLE_SECONDS: '2' }, { deltas: 700, deltaBytes: 96_000 });
    const current = gateway;
    const session = await openRaw(current.url, { key: current.key });
    await session.next('session.created');
    session.socket.pause();
    session.send({ type: 'response.create' });
    const upstream = current.upstream.connections.at(-1)?.socket;
    await waitFor(() => (upstream?.bufferedAmount ?? 0) > 60_000_000, 20_000, 'the upstream queue to fill');
    // Nothing moves either way: the idle limit ends the session (the close handshake cannot complete with a caller
    // that does not read, so its socket is cut after the grace period) and the upstream is closed.
    await waitFor(() => upstream?.readyState === WebSocket.CLOSED, 15_000, 'the upstream to be closed');
    session.socket.resume();
    const closed = await session.closed;
    expect([1000, 1006]).toContain(closed.code);
  }, 90_000);
});
