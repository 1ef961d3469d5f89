import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { once } from 'node:events';
import { Readable, Writable } from 'node:stream';
import { TAGS_HEADER } from '../customers/request-identity.js';
import type { ClientFamily } from '../codecs/client-family.js';
import type { Account, ApiKey } from '../domain/records.js';
import { toGatewayError } from '../errors/gateway-error.js';
import type { RequestContext, RouteHandler } from '../http/request-context.js';

/** What a line's request answered: its status, headers and body, as a caller over HTTP would have read them. */
export interface LineAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * The response side of an in-process request: collects what the route writes (status, headers, body) the way a
 * `ServerResponse` takes it. Only what routes use of a response is here; a stream the route opens is collected too.
 */
class CollectedResponse extends Writable {
  statusCode = 200;
  readonly socket = null;
  readonly #headers = new Map<string, OutgoingHttpHeader>();
  readonly #chunks: Buffer[] = [];
  #sent = false;

  get headersSent(): boolean {
    return this.#sent;
  }

  setHeader(name: string, value: OutgoingHttpHeader | number): this {
    this.#headers.set(name.toLowerCase(), typeof value === 'number' ? String(value) : value);
    return this;
  }

  getHeader(name: string): OutgoingHttpHeader | undefined {
    return this.#headers.get(name.toLowerCase());
  }

  getHeaders(): OutgoingHttpHeaders {
    return Object.fromEntries(this.#headers);
  }

  hasHeader(name: string): boolean {
    return this.#headers.has(name.toLowerCase());
  }

  removeHeader(name: string): void {
    this.#headers.delete(name.toLowerCase());
  }

  writeHead(status: number, headers?: OutgoingHttpHeaders): this {
    this.statusCode = status;
    for (const [name, value] of Object.entries(headers ?? {})) if (value !== undefined) this.setHeader(name, value);
    this.#sent = true;
    return this;
  }

  flushHeaders(): void {
    this.#sent = true;
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#sent = true;
    this.#chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    callback();
  }

  answer(): LineAnswer {
    const headers: Record<string, string> = {};
    for (const [name, value] of this.#headers) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
    return { status: this.statusCode, headers, body: Buffer.concat(this.#chunks) };
  }
}

/** The request side: the line's body as a request stream with the headers a client would have sent. */
function lineRequest(path: string, body: Buffer, batchId: string): IncomingMessage {
  const request = new Readable({ read() {} }) as Readable & Record<string, unknown>;
  request.push(body);
  request.push(null);
  Object.assign(request, {
    method: 'POST',
    url: path,
    complete: true,
    // The usage row of the line carries the batch's id as its `batch` tag.
    headers: { 'content-type': 'application/json', 'content-length': String(body.length), [TAGS_HEADER]: `batch=${batchId}` },
  });
  return request as unknown as IncomingMessage;
}

export interface LineCall {
  handler: RouteHandler;
  family: ClientFamily;
  path: string;
  batchId: string;
  /** The line's request id: its usage row's, the same however often the line is taken up. */
  requestId: string;
  key: ApiKey;
  account: Account;
  body: string;
}

/**
 * Runs one line through the API's own route, in process: the same operation, admission, relay and one settlement
 * as a request over HTTP, with the batch's key and account as the caller (checked by the runner) and the batch's
 * prices. A refusal or fault is answered as the route's family would answer it.
 */
export async function runLineRequest(call: LineCall): Promise<LineAnswer> {
  const response = new CollectedResponse();
  const context: RequestContext = {
    request: lineRequest(call.path, Buffer.from(call.body), call.batchId),
    response: response as unknown as ServerResponse,
    requestId: call.requestId,
    method: 'POST',
    path: call.path,
    query: new URLSearchParams(),
    params: {},
    startedAt: performance.now(),
    clientIp: '127.0.0.1',
    family: call.family,
    batchLine: { batchId: call.batchId, key: call.key, account: call.account },
  };
  try {
    await call.handler(context);
  } catch (thrown) {
    const error = toGatewayError(thrown);
    if (!response.headersSent) return { status: error.status, headers: {}, body: Buffer.from(call.family.encodeError(error)) };
  }
  if (!response.writableEnded) response.end();
  if (!response.writableFinished) await once(response, 'finish');
  return response.answer();
}
