import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { createApiApp, createConsoleApp } from '../app.js';
import type { GatewayConfig } from '../config/gateway-config.js';
import { AdmissionControl, DEFAULT_ADMISSION_INTERVAL_MS, DEFAULT_ADMISSION_MIN_SHARE } from '../http/admission-control.js';
import { listenOn } from '../http/accept-sockets.js';
import { ListenerStop } from '../http/drain.js';
import { hardenServer, refuseExcessHeaders, serverOptions } from '../http/harden-server.js';
import { responsesRouteHandler } from '../http/routes/batch-endpoints.js';
import { startMetricsListener } from '../metrics/metrics-listener.js';
import { SocketEndpoints } from '../realtime/socket-endpoints.js';
import type { GatewayServices } from '../services.js';
import { IdleMemoryRelief } from '../shared/idle-memory-relief.js';
import type { Logger } from '../shared/logger.js';
import { createServer } from '../shared/node-http.js';
import type { OpenedResources } from '../shared/opened-resources.js';

/** Realtime sessions of a draining instance end this long before DRAIN_SECONDS is up, so their close handshakes finish in it. */
const REALTIME_DRAIN_MARGIN_MS = 500;

/**
 * Listens (on `sockets` listening sockets, taking new connections one per turn while `holdIntake()`:
 * http/accept-sockets.ts); the URL, and how to stop the extra sockets.
 */
async function listen(server: Server, host: string, port: number, backlog: number, sockets = 1, holdIntake?: () => boolean): Promise<{ url: string; closeExtra: () => void }> {
  const { address, closeExtra } = await listenOn(server, { host, port, backlog, sockets, ...(holdIntake ? { holdIntake } : {}) });
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return { url: `http://${shownHost}:${address.port}`, closeExtra };
}

/** A listener address this process can connect to: a wildcard host (0.0.0.0, ::) becomes the loopback. */
function reachableUrl(url: string): string {
  return url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:');
}

/** Overload shedding in front of the API listener: readiness and the metrics follow it. */
function openAdmission(services: GatewayServices, opened: OpenedResources): AdmissionControl {
  const { config, metrics } = services;
  const admission = new AdmissionControl({
    maxInFlight: config.listener.admissionMaxInFlight,
    queueTargetMs: config.listener.admissionQueueTargetMs,
    intervalMs: DEFAULT_ADMISSION_INTERVAL_MS,
    minShare: DEFAULT_ADMISSION_MIN_SHARE,
  }, () => metrics.shed.inc());
  services.readiness.followOverload(() => admission.overloaded);
  if (admission.enabled) metrics.followAdmission(admission);
  admission.start();
  opened.add(() => admission.stop());
  return admission;
}

/** A full garbage collection once the listeners have been idle for MEMORY_RELIEF_IDLE_SECONDS. */
function startMemoryRelief(config: GatewayConfig, logger: Logger, inFlight: () => number, opened: OpenedResources): void {
  const memoryRelief = new IdleMemoryRelief({
    idleMs: config.memoryReliefIdleSeconds * 1000,
    inFlight,
    onCollected: ({ durationMs, cpuMs, heapTotalBefore, heapTotalAfter }) => logger.debug('idle memory relief: full garbage collection', {
      duration_ms: Math.round(durationMs),
      cpu_ms: Math.round(cpuMs),
      heap_mib_before: Math.round(heapTotalBefore / 2 ** 20),
      heap_mib_after: Math.round(heapTotalAfter / 2 ** 20),
    }),
  });
  memoryRelief.start();
  opened.add(() => memoryRelief.stop());
}

export interface Listeners {
  apiUrl: string;
  consoleUrl: string;
  /** The unauthenticated metrics listener (METRICS_PORT), when configured. */
  metricsUrl: string | null;
  /** Refuses new requests and sessions; those in flight go on until the listeners stop (through `opened`). */
  startDraining(): void;
}

/**
 * The API listener (with realtime upgrades), the console listener and the metrics listener, hardened and listening;
 * they stop together, before everything they use.
 */
export async function startListeners(services: GatewayServices, opened: OpenedResources): Promise<Listeners> {
  const { config, logger, metrics } = services;
  const admission = openAdmission(services, opened);
  // Each listener keeps the answers it has in flight, which its stop waits for.
  const api = createApiApp(services, admission);
  // Both listeners' addresses are known only once they listen; the console reads them when it needs them.
  const listening = { api: '', console: '' };
  const consoleApp = createConsoleApp(services, {
    console: () => config.consoleUrl ?? listening.console,
    apiPublic: () => config.apiPublicUrl ?? listening.api,
    apiInternal: () => reachableUrl(listening.api),
  });
  const apiStop = new ListenerStop(api.answers, config.drainSeconds);
  const consoleStop = new ListenerStop(consoleApp.answers, config.drainSeconds);
  const apiServer = createServer(serverOptions(config.listener), refuseExcessHeaders(apiStop.withConnectionHeaders(api), config.listener));
  const consoleServer = createServer(serverOptions(config.listener), refuseExcessHeaders(consoleStop.withConnectionHeaders(consoleApp), config.listener));
  apiStop.follow(apiServer);
  // Realtime sessions are WebSocket upgrades of the API listener; a draining instance ends them within DRAIN_SECONDS.
  const sockets = new SocketEndpoints(services, config.realtime, responsesRouteHandler(services));
  apiServer.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => sockets.upgrade(request, socket, head));
  opened.add(() => sockets.closeAll());
  consoleStop.follow(consoleServer);
  hardenServer(apiServer, config.listener, logger);
  hardenServer(consoleServer, config.listener, logger);
  // The listeners stop together (each may wait for its connections) and before everything they use.
  const listenerStops: Array<() => Promise<void>> = [];
  opened.add(() => Promise.all(listenerStops.map((stop) => stop())));
  const apiListening = await listen(apiServer, config.host, config.port, config.listener.listenBacklog, config.listener.acceptSockets, () => admission.overloaded);
  const apiUrl = apiListening.url;
  listenerStops.push(() => {
    apiListening.closeExtra();
    return apiStop.stop(apiServer, 10_000);
  });
  const { url: consoleUrl } = await listen(consoleServer, config.host, config.consolePort, config.listener.listenBacklog);
  listenerStops.push(() => consoleStop.stop(consoleServer, 1000));
  listening.api = apiUrl;
  listening.console = consoleUrl;
  if (config.consoleUrl === null && (config.host === '0.0.0.0' || config.host === '::')) {
    logger.warn('CONSOLE_URL is not set: console mails will link to the listener address; set it to the address users open', { console: consoleUrl });
  }
  const metricsListener = config.metricsPort === null ? null : await startMetricsListener(config.host, config.metricsPort, metrics);
  if (metricsListener !== null) listenerStops.push(() => metricsListener.close());
  startMemoryRelief(config, logger, () => api.answers.size + consoleApp.answers.size, opened);
  return {
    apiUrl,
    consoleUrl,
    metricsUrl: metricsListener?.url ?? null,
    startDraining: () => {
      apiStop.startDraining();
      sockets.drain(Math.max(0, config.drainSeconds * 1000 - REALTIME_DRAIN_MARGIN_MS));
      consoleStop.startDraining();
    },
  };
}
