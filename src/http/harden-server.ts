import type { IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ListenerLimits } from '../config/gateway-config.js';
import { encodeOpenAIError } from '../codecs/openai-chat/encode-error.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { ErrorCode } from '../errors/error-codes.js';
import { newId } from '../shared/ids.js';
import type { Logger } from '../shared/logger.js';

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/** How often Node checks the header and request deadlines of open connections. */
const DEADLINE_CHECK_INTERVAL_MS = 1000;
/** A socket that was answered and told to close is destroyed after this if the client keeps it open. */
const CLOSE_GRACE_MS = 1000;

/** node:http options that enforce the header, request and keep-alive deadlines and the header size. */
export function serverOptions(limits: ListenerLimits): ServerOptions {
  return {
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    requestTimeout: limits.requestTimeoutMs,
    // Node demands headersTimeout <= requestTimeout when the latter is set.
    headersTimeout: limits.requestTimeoutMs === 0 ? limits.headersTimeoutMs : Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
    connectionsCheckingInterval: DEADLINE_CHECK_INTERVAL_MS,
    maxHeaderSize: limits.maxHeaderBytes,
  };
}

/**
 * Protects a listener against malformed HTTP and connection floods: requests node:http cannot parse (bad request
 * line, bare LF or NUL in a header, conflicting lengths, oversized headers, a missed deadline) get the spec's error
 * object and the connection is closed, where the connection still allows an answer; a client IP address holding
 * `maxConnectionsPerIp` connections has further ones answered 429 and closed.
 */
export function hardenServer(server: Server, limits: ListenerLimits, logger: Logger): void {
  // Node keeps at most this many headers (the rest are dropped unparsed); one more than allowed reveals an excess.
  server.maxHeadersCount = limits.maxHeadersCount + 1;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => answerClientError(error, socket));
  if (limits.maxConnectionsPerIp > 0) capConnectionsPerAddress(server, limits.maxConnectionsPerIp, logger);
}

/** Marks a connection already answered 429 by the connection cap: nothing it sends may reach the routes. */
const REFUSED_CONNECTION = Symbol('refused-connection');

type MarkedSocket = Socket & { [REFUSED_CONNECTION]?: true };

/**
 * Refuses a request with more than `maxHeadersCount` headers with 431 before it reaches the routes, and drops any
 * request that arrives on a connection the per-IP cap refused (it was answered already; it must not be served).
 */
export function refuseExcessHeaders(listener: RequestListener, limits: ListenerLimits): RequestListener {
  const maxRawEntries = limits.maxHeadersCount * 2;
  return (request, response) => {
    if ((request.socket as MarkedSocket)[REFUSED_CONNECTION] === true) {
      request.socket.destroy();
      return;
    }
    if (request.rawHeaders.length <= maxRawEntries) {
      listener(request, response);
      return;
    }
    const error = new GatewayError('headers_too_large', `The request has more than ${limits.maxHeadersCount} headers.`);
    const body = encodeOpenAIError(error);
    response.writeHead(error.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-request-id': newId('req'), connection: 'close' });
    response.end(body);
  };
}

function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean; req?: { destroy(): void } } })._httpMessage;
  (socket as MarkedSocket)[REFUSED_CONNECTION] = true;
  if (error.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent === true) {
    socket.destroy();
    return;
  }
  const [code, message] = clientErrorAnswer(error.code);
  writeAndClose(socket, new GatewayError(code, message));
  // A request whose body missed its deadline must not be served afterwards: once the answer is on its way, its
  // handler sees the body fail.
  if (inFlight?.req !== undefined) setImmediate(() => inFlight.req?.destroy());
}

function clientErrorAnswer(code: string | undefined): [ErrorCode, string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return ['headers_too_large', 'The request line and headers are larger than this server accepts.'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return ['request_timeout', 'The request (headers and body) did not arrive in time.'];
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return ['payload_too_large', 'The chunk extensions of the request body are too large.'];
    default:
      return ['bad_request', 'The request is not well-formed HTTP/1.1.'];
  }
}

/** Writes a complete HTTP/1.1 answer with the error object straight to the socket, then closes it. */
function writeAndClose(socket: Socket, error: GatewayError, extraHeaders: string[] = []): void {
  const body = encodeOpenAIError(error);
  const head = [
    `HTTP/1.1 ${error.status} ${REASONS[error.status] ?? 'Error'}`,
    'content-type: application/json',
    `content-length: ${Buffer.byteLength(body)}`,
    `x-request-id: ${newId('req')}`,
    ...extraHeaders,
    'connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
  setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
}

const REASONS: Readonly<Record<number, string>> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
};

function capConnectionsPerAddress(server: Server, cap: number, logger: Logger): void {
  const open = new Map<string, number>();
  let lastReport = 0;
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (open.get(address) ?? 0) + 1;
    if (count > cap) {
      if (Date.now() - lastReport > 10_000) {
        lastReport = Date.now();
        logger.warn('connection cap per IP address reached: refusing new connections', { clientIp: address, cap });
      }
      (socket as MarkedSocket)[REFUSED_CONNECTION] = true;
      writeAndClose(socket, new GatewayError('rate_limit_exceeded', `Too many open connections from this IP address (at most ${cap}).`, { retryAfterSeconds: 1 }), ['retry-after: 1']);
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}
