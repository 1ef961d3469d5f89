import type { IncomingMessage } from 'node:http';
import { ServerResponse } from '../shared/node-http.js';
import type { Duplex } from 'node:stream';
import type { ClientFamily } from '../codecs/client-family.js';
import { toGatewayError } from '../errors/gateway-error.js';
import { arrivingContext } from '../http/arriving-request.js';
import type { RequestContext } from '../http/request-context.js';
import { sendError } from '../http/respond.js';
import type { GatewayServices } from '../services.js';
import { describeError } from '../shared/logger.js';

/** An `upgrade` request's context, answered (until it is a WebSocket) on a response of its own over the socket. */
export function upgradeContext(services: GatewayServices, request: IncomingMessage, socket: Duplex, familyOfPath: (path: string) => ClientFamily): RequestContext {
  const startedAt = performance.now();
  const response = new ServerResponse(request);
  response.assignSocket(socket as never);
  return arrivingContext(request, response, services.clientIp(request), familyOfPath, startedAt);
}

/**
 * Opens the upgraded connection. What fails before it is open is answered as the HTTP error it is, after which the
 * socket closes; an unexpected failure is logged (by class only) under `failure`.
 */
export function openUpgrade(services: GatewayServices, context: RequestContext, socket: Duplex, open: () => Promise<void>, failure: string): void {
  socket.on('error', () => undefined);
  open().catch((thrown: unknown) => {
    const error = toGatewayError(thrown);
    if (error.code === 'internal_error') services.logger.error(failure, { requestId: context.requestId, ...describeError(thrown) });
    if (socket.destroyed) return;
    context.response.setHeader('connection', 'close');
    context.response.once('finish', () => socket.destroy());
    sendError(context, error);
  });
}
