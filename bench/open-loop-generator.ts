/**
 * One process of the open-loop generator: sends one request at a fixed rate whatever the server does, on raw
 * keep-alive connections (a prebuilt request, the small reader of http1-response-reader.ts: a few microseconds a
 * request, where a full HTTP client costs tens and falls behind the gateway it should overload).
 *
 * Latency is measured from each request's scheduled time, not from when it was written, so a request that waited
 * for a free connection (all `maxConnections` busy) or for a late timer counts that wait: the figure a client
 * arriving at that moment would see.
 *
 *   node dist/bench/open-loop-generator.js <config.json>    # writes the result JSON to config.resultPath
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Http1ResponseReader, type Http1Response } from './http1-response-reader.js';
import { sleep } from './child-processes.js';

export interface OpenLoopConfig {
  url: string;
  headers: Record<string, string>;
  body: string;
  /** A string every good 2xx answer holds. */
  marker: string;
  ratePerSec: number;
  seconds: number;
  /** No complete answer this long after its scheduled time: timed out (its connection is closed). */
  timeoutMs: number;
  /** Connections this process opens at most; further requests wait for one to be free. */
  maxConnections: number;
  /** Wall-clock time (ms since the epoch) to send the first request at, so several processes start together. */
  startAtEpochMs: number;
  resultPath: string;
}

export interface OpenLoopProcessResult {
  /** Requests whose scheduled time fell in the sending window. */
  scheduled: number;
  /** Requests written to a connection. */
  sent: number;
  /** Latencies (ms from the scheduled time) of 2xx answers that passed the check, and of 503 answers. */
  admittedMs: number[];
  shedMs: number[];
  /** When each of those was scheduled, in ms from the start of sending (same order as admittedMs and shedMs). */
  admittedScheduledMs: number[];
  shedScheduledMs: number[];
  failures: Record<string, number>;
  timedOut: number;
  /** Requests that waited for a free connection. */
  waitedForConnection: number;
  /** Most connections open at once. */
  maxOpen: number;
  /** Requests written more than 10 ms after their scheduled time (the generator or the pool fell behind). */
  lateSends: number;
  sendingSeconds: number;
  /** This process's CPU time (user + system) while it was sending. */
  cpuMs: number;
}

interface Connection {
  socket: Socket;
  reader: Http1ResponseReader;
  /** The scheduled time of the request in flight on it, or -1 while idle. */
  scheduledAt: number;
  open: boolean;
}

/** The request as bytes: request line, headers with Host and Content-Length, body. */
export function encodeRequest(url: URL, headers: Record<string, string>, body: string): Buffer {
  const bodyBytes = Buffer.from(body, 'utf8');
  const lines = [`POST ${url.pathname}${url.search} HTTP/1.1`, `host: ${url.host}`, `content-length: ${bodyBytes.length}`];
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() !== 'host' && name.toLowerCase() !== 'content-length') lines.push(`${name}: ${value}`);
  }
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), bodyBytes]);
}

const LATE_SEND_MS = 10;
const TIMEOUT_SWEEP_MS = 20;

export async function runOpenLoopProcess(config: OpenLoopConfig): Promise<OpenLoopProcessResult> {
  const url = new URL(config.url);
  if (url.protocol !== 'http:') throw new Error(`open loop: only http: URLs (${config.url})`);
  const request = encodeRequest(url, config.headers, config.body);
  const port = Number(url.port || 80);
  const host = url.hostname;
  const result: OpenLoopProcessResult = {
    scheduled: 0, sent: 0, admittedMs: [], shedMs: [], admittedScheduledMs: [], shedScheduledMs: [], failures: {}, timedOut: 0,
    waitedForConnection: 0, maxOpen: 0, lateSends: 0, sendingSeconds: 0, cpuMs: 0,
  };
  const fail = (reason: string): void => {
    result.failures[reason] = (result.failures[reason] ?? 0) + 1;
  };
  const idle: Connection[] = [];
  const busy = new Set<Connection>();
  /** Scheduled times of requests waiting for a free connection, oldest first. */
  const waiting: number[] = [];
  let waitingHead = 0;
  let openCount = 0;
  let startedAt = 0;

  const send = (conn: Connection, scheduledAt: number): void => {
    conn.scheduledAt = scheduledAt;
    busy.add(conn);
    result.sent += 1;
    if (performance.now() - scheduledAt > LATE_SEND_MS) result.lateSends += 1;
    conn.socket.write(request);
  };
  const nextWaiting = (): number | undefined => {
    if (waitingHead >= waiting.length) return undefined;
    const at = waiting[waitingHead++]!;
    if (waitingHead > 4096 && waitingHead * 2 > waiting.length) {
      waiting.splice(0, waitingHead);
      waitingHead = 0;
    }
    return at;
  };
  const freed = (conn: Connection): void => {
    busy.delete(conn);
    conn.scheduledAt = -1;
    if (!conn.open) return;
    const at = nextWaiting();
    if (at !== undefined) send(conn, at);
    else idle.push(conn);
  };
  /** Closes a connection and forgets it: a closed connection is neither busy nor idle. */
  const closeConnection = (conn: Connection): void => {
    if (!conn.open) return;
    conn.open = false;
    openCount -= 1;
    busy.delete(conn);
    const slot = idle.indexOf(conn);
    if (slot >= 0) idle.splice(slot, 1);
    conn.socket.destroy();
  };
  /** Requests that wait for a connection get new ones in place of those closed. */
  const refill = (): void => {
    while (openCount < config.maxConnections) {
      const at = nextWaiting();
      if (at === undefined) return;
      send(openConnection(), at);
    }
  };
  const onResponse = (conn: Connection, response: Http1Response): void => {
    const ms = performance.now() - conn.scheduledAt;
    if (conn.scheduledAt < 0) fail('unsolicited response');
    else if (response.status === 503) {
      result.shedMs.push(ms);
      result.shedScheduledMs.push(conn.scheduledAt - startedAt);
    } else if (response.status >= 200 && response.status < 300) {
      if (response.body.includes(config.marker)) {
        result.admittedMs.push(ms);
        result.admittedScheduledMs.push(conn.scheduledAt - startedAt);
      } else fail(`${response.status} check`);
    } else fail(String(response.status));
    if (!response.keepAlive) closeConnection(conn);
    freed(conn);
    if (!conn.open) refill();
  };
  const openConnection = (): Connection => {
    const socket = connect({ host, port, noDelay: true });
    const conn: Connection = { socket, reader: new Http1ResponseReader((response) => onResponse(conn, response)), scheduledAt: -1, open: true };
    openCount += 1;
    result.maxOpen = Math.max(result.maxOpen, openCount);
    socket.on('data', (chunk: Buffer) => {
      try {
        conn.reader.push(chunk);
      } catch (error) {
        fail((error as Error).name);
        closeConnection(conn);
        refill();
      }
    });
    const lost = (reason: string): void => {
      if (!conn.open) return;
      // A response whose body ran to the close is complete now (and its handler closed the connection).
      if (conn.reader.end()) return;
      const inFlight = conn.scheduledAt >= 0;
      closeConnection(conn);
      if (inFlight) {
        fail(reason);
        conn.scheduledAt = -1;
      }
      refill();
    };
    socket.on('error', (error: NodeJS.ErrnoException) => lost(error.code ?? error.name));
    socket.on('close', () => lost('closed'));
    return conn;
  };
  const dispatch = (scheduledAt: number): void => {
    const conn = idle.pop();
    if (conn !== undefined) return send(conn, scheduledAt);
    if (openCount < config.maxConnections) return send(openConnection(), scheduledAt);
    waiting.push(scheduledAt);
    result.waitedForConnection += 1;
  };
  const sweepTimeouts = (now: number): void => {
    for (const conn of busy) {
      if (now - conn.scheduledAt > config.timeoutMs) {
        result.timedOut += 1;
        conn.scheduledAt = -1;
        closeConnection(conn);
      }
    }
    while (waitingHead < waiting.length && now - waiting[waitingHead]! > config.timeoutMs) {
      waitingHead += 1;
      result.timedOut += 1;
    }
    refill();
  };

  const wait = config.startAtEpochMs - Date.now();
  if (wait > 0) await sleep(wait);
  const cpuAtStart = process.cpuUsage();
  startedAt = performance.now();
  const intervalMs = 1000 / config.ratePerSec;
  const total = Math.floor(config.ratePerSec * config.seconds);
  let lastSweep = startedAt;
  while (result.scheduled < total) {
    const now = performance.now();
    while (result.scheduled < total && startedAt + result.scheduled * intervalMs <= now) {
      dispatch(startedAt + result.scheduled * intervalMs);
      result.scheduled += 1;
    }
    if (now - lastSweep >= TIMEOUT_SWEEP_MS) {
      sweepTimeouts(now);
      lastSweep = now;
    }
    await sleep(1);
  }
  result.sendingSeconds = (performance.now() - startedAt) / 1000;
  const cpu = process.cpuUsage(cpuAtStart);
  result.cpuMs = (cpu.user + cpu.system) / 1000;
  const drainUntil = performance.now() + config.timeoutMs + 1000;
  while ((busy.size > 0 || waitingHead < waiting.length) && performance.now() < drainUntil) {
    sweepTimeouts(performance.now());
    await sleep(TIMEOUT_SWEEP_MS);
  }
  for (const conn of [...idle, ...busy]) closeConnection(conn);
  return result;
}

const invokedDirectly = process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href;
if (invokedDirectly) {
  const configPath = process.argv[2];
  if (configPath === undefined) {
    console.error('usage: open-loop-generator.js <config.json>');
    process.exit(2);
  }
  const config = JSON.parse(readFileSync(configPath, 'utf8')) as OpenLoopConfig;
  runOpenLoopProcess(config).then((result) => {
    writeFileSync(config.resultPath, JSON.stringify(result));
    process.exit(0);
  }, (error: unknown) => {
    console.error(error instanceof Error ? error.stack : String(error));
    process.exit(1);
  });
}
