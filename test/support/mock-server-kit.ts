/**
 * What the three mock upstreams (OpenAI, Anthropic, Gemini) share below their vendor's wire: the request log,
 * one-shot faults, sleeps that `close` cuts short, socket tracking and the body-collecting listener. Each mock keeps
 * its own routes, validation and error shapes.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** path without the query string */
  path: string;
  /** path with the query string */
  url: string;
  /** header names lowercased; repeated headers joined with ", " */
  headers: Record<string, string>;
  /** parsed JSON body; undefined when empty or not JSON */
  body: unknown;
  rawBody: string;
  receivedAt: number;
}

/** A request as the mock's handler starts from it. */
export interface IncomingCall {
  method: string;
  path: string;
  url: string;
  params: URLSearchParams;
  body: unknown;
  /** the body is there but is not JSON */
  jsonError: boolean;
}

/** The fault kinds every mock handles the same way before answering; each mock adds its own. */
export type CommonFault = { kind: 'delay'; ms: number; times?: number } | { kind: 'reset'; times?: number };

export interface MockListenerOptions {
  port?: number | undefined;
  maxBodyBytes: number;
  /** Takes over a request before its body is read (e.g. multipart uploads); true when it did. */
  intercept?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** Answers a request whose body has been read whole. */
  handle(req: IncomingMessage, res: ServerResponse, rawBody: string): Promise<void>;
  /** Answers a request whose body is over `maxBodyBytes`. */
  tooLarge(req: IncomingMessage, res: ServerResponse): void;
  /** Answers what `handle` threw (the mock's own error type, or anything else as a 500). */
  failed(req: IncomingMessage, res: ServerResponse, error: unknown): void;
}

export class MockServerKit<Fault extends { kind: string; times?: number }> {
  readonly requests: RecordedRequest[] = [];
  #fault: Fault | null = null;
  #closing = false;
  #closed: Promise<void> | undefined;
  #server: Server | undefined;
  readonly #sockets = new Set<Socket>();
  readonly #sleepers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();

  constructor(private readonly record: boolean) {}

  /** True once `close` has begun: streams stop writing. */
  get closing(): boolean {
    return this.#closing;
  }

  setFault(next: Fault | null): void {
    this.#fault = next;
  }

  /** The fault for this request; one with `times` clears itself after that many requests. */
  takeFault(): Fault | null {
    const current = this.#fault;
    if (current?.times !== undefined) this.#fault = current.times <= 1 ? null : { ...current, times: current.times - 1 };
    return current;
  }

  /** Resolves after `ms`, or at once when the mock is closing. */
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.#closing || ms <= 0) return resolve();
      const entry = {
        timer: setTimeout(() => {
          this.#sleepers.delete(entry);
          resolve();
        }, ms),
        resolve,
      };
      this.#sleepers.add(entry);
    });
  }

  /** Parses the request line and JSON body, and records the request when recording is on. */
  intake(req: IncomingMessage, rawBody: string): IncomingCall {
    const url = req.url ?? '/';
    const [path = '/', query = ''] = url.split('?', 2);
    const method = req.method ?? 'GET';
    let body: unknown;
    let jsonError = false;
    if (rawBody.length > 0) {
      try {
        body = JSON.parse(rawBody);
      } catch {
        jsonError = true;
      }
    }
    if (this.record) {
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
      }
      this.requests.push({ method, path, url, headers, body, rawBody, receivedAt: Date.now() });
    }
    return { method, path, url, params: new URLSearchParams(query), body, jsonError };
  }

  /**
   * Applies the common faults and the mock's response delay: a reset destroys the connection, a delay waits. False
   * when nothing more may be written (reset, closing, or the caller gone).
   */
  async beforeAnswer(req: IncomingMessage, res: ServerResponse, fault: Fault | null, responseDelayMs: number): Promise<boolean> {
    const common = fault as CommonFault | null;
    if (common?.kind === 'reset') {
      const socket = req.socket as Socket & { resetAndDestroy?: () => void };
      if (typeof socket.resetAndDestroy === 'function') socket.resetAndDestroy();
      else socket.destroy();
      return false;
    }
    if (common?.kind === 'delay') await this.sleep(common.ms);
    if (responseDelayMs > 0) await this.sleep(responseDelayMs);
    return !this.#closing && !res.destroyed;
  }

  /** Listens on 127.0.0.1 (a free port unless given), reading each body whole before `handle`. */
  async listen(options: MockListenerOptions): Promise<{ server: Server; port: number }> {
    const server = createServer((req, res) => {
      if (options.intercept?.(req, res) === true) return;
      const parts: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= options.maxBodyBytes) parts.push(chunk);
      });
      req.on('error', () => res.destroy());
      req.on('end', () => {
        if (size > options.maxBodyBytes) return options.tooLarge(req, res);
        options.handle(req, res, Buffer.concat(parts).toString('utf8')).catch((error: unknown) => options.failed(req, res, error));
      });
    });
    server.keepAliveTimeout = 65_000;
    server.on('connection', (socket: Socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      // A deep backlog: a test that opens a thousand streams at once through the gateway must not see connections
      // dropped (and retried by SYN for up to two minutes) while a loaded machine's loop is slow to accept them.
      server.listen({ port: options.port ?? 0, host: '127.0.0.1', backlog: 4096 }, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#server = server;
    return { server, port: (server.address() as AddressInfo).port };
  }

  /** Ends pending sleeps, stops listening and drops every connection. */
  close(): Promise<void> {
    this.#closed ??= new Promise<void>((resolve) => {
      this.#closing = true;
      for (const sleeper of this.#sleepers) {
        clearTimeout(sleeper.timer);
        sleeper.resolve();
      }
      this.#sleepers.clear();
      if (this.#server === undefined) return resolve();
      this.#server.close(() => resolve());
      for (const socket of this.#sockets) socket.destroy();
    });
    return this.#closed;
  }
}

/** Writes `text`; when the socket is full, the promise settles on drain (or close) so a stream keeps its pace. */
export function writeWithBackpressure(res: ServerResponse, text: string): Promise<void> | undefined {
  if (res.write(text)) return undefined;
  return new Promise((resolve) => {
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/** Ends the connection mid-response: what was written is flushed, then FIN, no HTTP terminator. */
export function cutConnection(res: ServerResponse): void {
  const socket = res.socket;
  if (!socket) return;
  socket.end();
  const timer = setTimeout(() => socket.destroy(), 1000);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}
