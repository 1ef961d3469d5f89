import type { IncomingMessage, OutgoingHttpHeader, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { once } from 'node:events';
import { Readable, Writable } from 'node:stream';
import type { ClientFamily } from '../codecs/client-family.js';
import { toGatewayError } from '../errors/gateway-error.js';
import { CallerGone } from '../relay/caller-signal.js';
import type { InProcessCaller, RequestContext, RouteHandler } from './request-context.js';

/** What an in-process request answered: its status, headers and body, as a caller over HTTP would have read them. */
export interface InProcessAnswer {
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

  /** With `onChunk`, the body goes there as it is written (the next write waits for it), not into the answer. */
  constructor(private readonly onChunk?: InProcessCall['onChunk']) {
    super();
  }

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

  /** The head as node:http takes it: headers as an object, or as a flat `[name, value, …]` list. */
  writeHead(status: number, headers?: OutgoingHttpHeaders | OutgoingHttpHeader[]): this {
    this.statusCode = status;
    if (Array.isArray(headers)) {
      for (let at = 0; at + 1 < headers.length; at += 2) this.setHeader(String(headers[at]), headers[at + 1] as OutgoingHttpHeader);
    } else {
      for (const [name, value] of Object.entries(headers ?? {})) if (value !== undefined) this.setHeader(name, value);
    }
    this.#sent = true;
    return this;
  }

  flushHeaders(): void {
    this.#sent = true;
  }

  override _write(chunk: Buffer | string, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.#sent = true;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (this.onChunk === undefined) {
      this.#chunks.push(bytes);
      callback();
      return;
    }
    Promise.resolve(this.onChunk(bytes, this.answer())).then(() => callback(), callback);
  }

  answer(): InProcessAnswer {
    const headers: Record<string, string> = {};
    for (const [name, value] of this.#headers) headers[name] = Array.isArray(value) ? value.join(', ') : String(value);
    return { status: this.statusCode, headers, body: Buffer.concat(this.#chunks) };
  }
}

/** The request side: the body as a request stream with the headers a client would have sent. */
function bodyRequest(path: string, body: Buffer, headers: Record<string, string>): IncomingMessage {
  const request = new Readable({ read() {} }) as Readable & Record<string, unknown>;
  request.push(body);
  request.push(null);
  Object.assign(request, {
    method: 'POST',
    url: path,
    complete: true,
    headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) },
  });
  return request as unknown as IncomingMessage;
}

export interface InProcessCall {
  handler: RouteHandler;
  family: ClientFamily;
  path: string;
  /** The path's parameters, as the router would have read them from `path` (a Gemini action's `model`). */
  params?: Record<string, string>;
  /** The request's id: its usage row's. */
  requestId: string;
  /** The caller, checked by whoever makes the request: the route takes it as authenticated. */
  caller: InProcessCaller;
  body: string;
  /** Headers as a client would send them (lower-case names); content type and length are set here. */
  headers?: Record<string, string>;
  clientIp?: string;
  /**
   * Takes the answer's body as it is written (a stream as it streams), with the status and headers so far; the
   * route's next write waits for the promise. The answer returned then has an empty body.
   */
  onChunk?: (chunk: Buffer, head: InProcessAnswer) => Promise<void> | void;
  /** Aborting it is the caller leaving: the route sees its response closed, as when a client disconnects. */
  signal?: AbortSignal;
}

/**
 * Runs one POST through an API route in process: the same operation, admission, relay and one settlement as a
 * request over HTTP, with the given caller. A refusal or fault is answered as the route's family would answer it.
 */
export async function runInProcess(call: InProcessCall): Promise<InProcessAnswer> {
  const response = new CollectedResponse(call.onChunk);
  if (call.signal !== undefined) {
    // Writes after the caller left fail on the destroyed response; the route learns of it from its close.
    response.on('error', () => undefined);
    if (call.signal.aborted) response.destroy();
    else call.signal.addEventListener('abort', () => response.destroy(), { once: true });
  }
  // The caller left when the response closes unfinished (destroyed by the signal), as over HTTP.
  const callerGone = new CallerGone();
  response.once('close', () => {
    if (!response.writableFinished) callerGone.abort(new Error('client disconnected'));
  });
  const context: RequestContext = {
    request: bodyRequest(call.path, Buffer.from(call.body), call.headers ?? {}),
    response: response as unknown as ServerResponse,
    requestId: call.requestId,
    method: 'POST',
    path: call.path,
    query: new URLSearchParams(),
    params: call.params ?? {},
    startedAt: performance.now(),
    clientIp: call.clientIp ?? '127.0.0.1',
    family: call.family,
    callerGone,
    observation: null,
    inProcess: call.caller,
  };
  try {
    await call.handler(context);
  } catch (thrown) {
    const error = toGatewayError(thrown);
    if (!response.headersSent) return { status: error.status, headers: {}, body: Buffer.from(call.family.encodeError(error)) };
  }
  if (response.destroyed) return response.answer();
  if (!response.writableEnded) response.end();
  // A response destroyed meanwhile (the caller left) never finishes: its close ends the wait.
  if (!response.writableFinished) await Promise.race([once(response, 'finish'), once(response, 'close')]);
  return response.answer();
}
