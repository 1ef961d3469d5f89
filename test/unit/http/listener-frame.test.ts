/**
 * The listener frame: one `close` listener per request ends everything the request began — the answer leaves the set
 * the drain waits on, the admission slot goes back, the request metrics count it (499 when the answer did not finish),
 * the access log line gets its status (499 when the head was not sent), and a caller who left before the answer
 * finished is told to the relay through the request's own signal, not through another listener on the response.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClientIpResolver } from '../../../src/auth/client-ip.js';
import { openAIFamily } from '../../../src/codecs/openai-chat/family.js';
import type { ClientFamily } from '../../../src/codecs/client-family.js';
import { AdmissionControl } from '../../../src/http/admission-control.js';
import { createListener, type FrameListener, type MetricLabels } from '../../../src/http/create-listener.js';
import type { RequestContext } from '../../../src/http/request-context.js';
import { sendJson } from '../../../src/http/respond.js';
import { responseSink } from '../../../src/http/response-sink.js';
import { Router } from '../../../src/http/router.js';
import { GatewayMetrics } from '../../../src/metrics/gateway-metrics.js';
import { createLogger } from '../../../src/shared/logger.js';
import { Telemetry } from '../../../src/telemetry/telemetry.js';

const servers: Server[] = [];
const stops: Array<() => void> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) stop();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** What a held route saw of its request: its context, and how often the caller-gone listener it registered ran. */
interface Held {
  context: RequestContext;
  closeListenersBefore: number;
  closeListenersAfter: number;
  gone: number;
  finish: () => void;
}

/** A frame with metrics, admission (at most two at once) and an access log, serving `/done`, `/held` and `/started`. */
async function serveFrame(familyOfPath?: (path: string) => ClientFamily): Promise<{ port: number; listener: FrameListener; metrics: GatewayMetrics; admission: AdmissionControl; lines: Array<Record<string, unknown>>; held: Held[] }> {
  const held: Held[] = [];
  const hold = (startHead: boolean) => (context: RequestContext) => new Promise<void>((resolve) => {
    const closeListenersBefore = context.response.listenerCount('close');
    const entry: Held = { context, closeListenersBefore, closeListenersAfter: 0, gone: 0, finish: () => {} };
    responseSink(context).onCallerGone(() => (entry.gone += 1));
    entry.closeListenersAfter = context.response.listenerCount('close');
    if (startHead) {
      context.response.writeHead(200, { 'content-type': 'text/plain' });
      context.response.write('partial');
    }
    entry.finish = () => {
      if (startHead) context.response.end('done');
      else sendJson(context, 200, { ok: true });
      resolve();
    };
    held.push(entry);
  });
  const router = new Router()
    .add('GET', '/done', async (context) => sendJson(context, 200, { ok: true }))
    .add('POST', '/held', hold(false))
    .add('POST', '/started', hold(true));
  const metrics = new GatewayMetrics();
  stops.push(metrics.stop);
  const labels = new Map<string, MetricLabels>();
  const routeLabels = (path: string): MetricLabels => {
    let found = labels.get(path);
    if (found === undefined) labels.set(path, (found = Object.freeze({ protocol: 'test', endpoint: path.slice(1) })));
    return found;
  };
  const admission = new AdmissionControl({ maxInFlight: 2, queueTargetMs: 0, intervalMs: 250, minShare: 0.1 });
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('info', (line) => {
    const parsed = JSON.parse(line) as Record<string, unknown>;
    if (parsed.message === 'request') lines.push(parsed);
  });
  const telemetry = new Telemetry(null, true, logger, () => null);
  const listener = createListener({
    router, logger, clientIp: createClientIpResolver({ mode: 'none' }), admission, telemetry, metrics: { metrics, routeLabels },
    ...(familyOfPath === undefined ? {} : { familyOfPath }),
  });
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, listener, metrics, admission, lines, held };
}

/** Sends a request and resolves with its status once answered; `leave` destroys it instead once the route holds it. */
function send(port: number, method: string, path: string): { answered: Promise<number>; leave: () => void } {
  let outgoing: ReturnType<typeof httpRequest> | null = null;
  const answered = new Promise<number>((resolve, reject) => {
    outgoing = httpRequest({ host: '127.0.0.1', port, method, path, headers: { 'content-length': '0' } }, (incoming: IncomingMessage) => {
      incoming.resume();
      incoming.on('end', () => resolve(incoming.statusCode ?? 0));
      incoming.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
  answered.catch(() => undefined);
  return { answered, leave: () => outgoing?.destroy() };
}

const until = (condition: () => boolean): Promise<void> => expect.poll(condition, { timeout: 5000, interval: 5 }).toBe(true);

const sample = (text: string, name: string): number | null => {
  const line = text.split('\n').find((entry) => entry.startsWith(`${name} `));
  return line === undefined ? null : Number(line.slice(name.length + 1));
};

describe('the listener frame', () => {
  it('adds one close listener per request, and the relay\'s caller-gone listener adds none', async () => {
    const frame = await serveFrame();
    // A bare node:http server's response, for the listeners node:http itself puts on it.
    const bare = createServer((_request: IncomingMessage, response: ServerResponse) => {
      bareCount = response.listenerCount('close');
      response.end();
    });
    let bareCount = -1;
    servers.push(bare);
    await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
    await send((bare.address() as AddressInfo).port, 'POST', '/').answered;
    const asked = send(frame.port, 'POST', '/held');
    await until(() => frame.held.length === 1);
    const entry = frame.held[0]!;
    expect(entry.closeListenersBefore).toBe(bareCount + 1);
    expect(entry.closeListenersAfter).toBe(entry.closeListenersBefore);
    entry.finish();
    expect(await asked.answered).toBe(200);
  });

  it('ends an answered request: out of flight, slot released, counted with its status, logged, caller not gone', async () => {
    const frame = await serveFrame();
    const asked = send(frame.port, 'POST', '/held');
    await until(() => frame.held.length === 1);
    expect(frame.listener.answers.size).toBe(1);
    expect(frame.admission.inFlight).toBe(1);
    expect(sample(frame.metrics.render(), 'unigate_in_flight_requests')).toBe(1);
    frame.held[0]!.finish();
    expect(await asked.answered).toBe(200);
    await until(() => frame.listener.answers.size === 0);
    const text = frame.metrics.render();
    expect(sample(text, 'unigate_in_flight_requests')).toBe(0);
    expect(sample(text, 'unigate_requests_total{protocol="test",endpoint="held",status="200"}')).toBe(1);
    expect(sample(text, 'unigate_request_duration_seconds_count{protocol="test",endpoint="held"}')).toBe(1);
    expect(sample(text, 'unigate_admission_latency_seconds_count{outcome="admitted"}')).toBe(1);
    expect(frame.admission.inFlight).toBe(0);
    expect(frame.held[0]!.context.callerGone.aborted).toBe(false);
    expect(frame.held[0]!.gone).toBe(0);
    await until(() => frame.lines.length === 1);
    expect(frame.lines[0]).toMatchObject({ path: '/held', status: 200 });
  });

  it('a caller who leaves before the head: 499 in the metrics and the access log, and the relay is told once', async () => {
    const frame = await serveFrame();
    const asked = send(frame.port, 'POST', '/held');
    await until(() => frame.held.length === 1);
    asked.leave();
    await until(() => frame.listener.answers.size === 0);
    const entry = frame.held[0]!;
    expect(entry.context.callerGone.aborted).toBe(true);
    expect(entry.gone).toBe(1);
    const text = frame.metrics.render();
    expect(sample(text, 'unigate_requests_total{protocol="test",endpoint="held",status="499"}')).toBe(1);
    expect(sample(text, 'unigate_in_flight_requests')).toBe(0);
    expect(frame.admission.inFlight).toBe(0);
    await until(() => frame.lines.length === 1);
    expect(frame.lines[0]).toMatchObject({ path: '/held', status: 499 });
  });

  it('a caller who leaves mid-answer: 499 in the metrics, the sent status in the access log, and the relay is told', async () => {
    const frame = await serveFrame();
    const asked = send(frame.port, 'POST', '/started');
    await until(() => frame.held.length === 1);
    await until(() => frame.held[0]!.context.response.headersSent);
    asked.leave();
    await until(() => frame.listener.answers.size === 0);
    expect(frame.held[0]!.gone).toBe(1);
    expect(sample(frame.metrics.render(), 'unigate_requests_total{protocol="test",endpoint="started",status="499"}')).toBe(1);
    await until(() => frame.lines.length === 1);
    expect(frame.lines[0]).toMatchObject({ path: '/started', status: 200 });
  });

  it('a request refused for overload: 503 counted as refused, no slot taken, nothing logged', async () => {
    const frame = await serveFrame();
    const first = send(frame.port, 'POST', '/held');
    const second = send(frame.port, 'POST', '/held');
    await until(() => frame.held.length === 2);
    expect(await send(frame.port, 'GET', '/done').answered).toBe(503);
    await until(() => frame.listener.answers.size === 2);
    let text = frame.metrics.render();
    expect(sample(text, 'unigate_requests_total{protocol="test",endpoint="done",status="503"}')).toBe(1);
    expect(sample(text, 'unigate_admission_latency_seconds_count{outcome="refused"}')).toBe(1);
    expect(sample(text, 'unigate_in_flight_requests')).toBe(2);
    expect(frame.admission.inFlight).toBe(2);
    for (const entry of frame.held) entry.finish();
    expect(await first.answered).toBe(200);
    expect(await second.answered).toBe(200);
    await until(() => frame.listener.answers.size === 0);
    text = frame.metrics.render();
    expect(sample(text, 'unigate_in_flight_requests')).toBe(0);
    expect(frame.admission.inFlight).toBe(0);
    await until(() => frame.lines.length === 2);
    expect(frame.lines.map((line) => line.status)).toEqual([200, 200]);
  });

  it('asks the family of a path once, and each time for a path longer than any route', async () => {
    const asked: string[] = [];
    const frame = await serveFrame((path) => {
      asked.push(path);
      return openAIFamily;
    });
    for (let round = 0; round < 3; round += 1) expect(await send(frame.port, 'GET', '/done').answered).toBe(200);
    expect(asked).toEqual(['/done']);
    const long = `/${'x'.repeat(300)}`;
    for (let round = 0; round < 2; round += 1) expect(await send(frame.port, 'GET', long).answered).toBe(404);
    expect(asked).toEqual(['/done', long, long]);
  });
});
