/**
 * The head of an API answer, as it leaves on the wire: every header the gateway sets, each exactly once (the request
 * id added as the head is written, the writer's own headers, the answer's), for a whole answer, a streamed one and an
 * error; headers set on the response before the head (CORS, connection) kept beside them; and a header value holding
 * a line break refused by node:http's validation as before, the refusal answered as a clean error.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClientIpResolver } from '../../../src/auth/client-ip.js';
import { GatewayError } from '../../../src/errors/gateway-error.js';
import { createListener } from '../../../src/http/create-listener.js';
import type { RequestContext } from '../../../src/http/request-context.js';
import { sendError } from '../../../src/http/respond.js';
import { responseSink } from '../../../src/http/response-sink.js';
import { Router } from '../../../src/http/router.js';
import { MeteredSink } from '../../../src/relay/metered-sink.js';
import { CallerGone } from '../../../src/relay/caller-signal.js';
import { admittedRateLimitHeaders } from '../../../src/limits/rate-limit-headers.js';
import { openAIFamily } from '../../../src/codecs/openai-chat/family.js';
import { createLogger } from '../../../src/shared/logger.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** The answer headers a billed chat answer carries: the rate-limit sets of one window, the model answering, the cost. */
function answerHeaders(): Record<string, string> {
  const state = { rule: { id: 'key:rpm', dimension: 'requests', limit: 60, windowMs: 60_000 }, remaining: 59, resetAtMs: Date.now() + 30_000 };
  const headers = admittedRateLimitHeaders({ states: [state as never], tokenRules: new Set() }, openAIFamily, Date.now());
  headers['x-gateway-model'] = 'gpt-test';
  return headers;
}

const RATE_LIMIT_NAMES = ['x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset', 'x-ratelimit-dimension',
  'x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests'];

function metered(context: RequestContext): MeteredSink {
  return new MeteredSink(responseSink(context), () => undefined);
}

async function serveApi(): Promise<number> {
  const router = new Router()
    .add('POST', '/whole', async (context) => {
      metered(context).send({ status: 200, body: '{"ok":true}', contentType: 'application/json', headers: { ...answerHeaders(), 'x-request-cost-usd': '0.000123' } });
    })
    .add('POST', '/stream', async (context) => {
      const sink = metered(context);
      const stream = sink.openStream({ ...answerHeaders(), 'content-type': 'text/event-stream; charset=utf-8' }, new CallerGone(), () => undefined);
      await stream.write('data: {"a":1}\n\n');
      stream.end('data: [DONE]\n\n');
      sink.release();
    })
    .add('POST', '/error', async (context) => {
      sendError(context, new GatewayError('rate_limit_exceeded', 'Too many requests.', { retryAfterSeconds: 2, headers: answerHeaders() }));
    })
    .add('POST', '/browser', async (context) => {
      // As the browser policy does before the answer: headers set on the response first.
      context.response.setHeader('access-control-allow-origin', 'https://app.example');
      context.response.setHeader('vary', 'Origin');
      metered(context).send({ status: 200, body: '{"ok":true}', contentType: 'application/json', headers: answerHeaders() });
    })
    .add('POST', '/broken-value', async (context) => {
      // A value with a line break (as an upstream's text would be, were it copied into a header unchecked).
      metered(context).send({ status: 200, body: '{"ok":true}', contentType: 'application/json', headers: { ...answerHeaders(), 'x-gateway-warnings': 'one\r\nset-cookie: a=b' } });
    })
    .add('POST', '/broken-stream', async (context) => {
      const sink = metered(context);
      const stream = sink.openStream({ 'content-type': 'text/event-stream', 'x-gateway-model': 'a\nb' }, new CallerGone(), () => undefined);
      await stream.write('data: 1\n\n');
    });
  const listener = createListener({ router, logger: createLogger('error', () => undefined), clientIp: createClientIpResolver({ mode: 'none' }) });
  const server = createServer(listener);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

/** The raw head of one answer: its status and its header lines (lower-cased names, in order, duplicates kept). */
function rawHead(port: number, path: string): Promise<{ status: number; headers: Array<[string, string]>; rest: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      text += chunk;
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const lines = text.slice(0, end).split('\r\n');
      const status = Number((lines.shift() ?? '').split(' ')[1]);
      const headers = lines.map((line): [string, string] => {
        const colon = line.indexOf(':');
        return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
      });
      socket.destroy();
      resolve({ status, headers, rest: text.slice(end + 4) });
    });
    socket.on('error', reject);
    socket.write(`POST ${path} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 0\r\n\r\n`);
  });
}

function names(headers: Array<[string, string]>): string[] {
  return headers.map(([name]) => name).sort();
}

function value(headers: Array<[string, string]>, name: string): string | undefined {
  return headers.find(([found]) => found === name)?.[1];
}

/** What node:http adds itself to every answer on a kept-alive HTTP/1.1 connection. */
const NODE_HEADERS = ['connection', 'date', 'keep-alive'];

describe('the head of an API answer', () => {
  it('a whole answer: every header once, the body\'s length, the request id, the rate limits and the cost', async () => {
    const port = await serveApi();
    const { status, headers } = await rawHead(port, '/whole');
    expect(status).toBe(200);
    expect(names(headers)).toEqual([...NODE_HEADERS, 'content-length', 'content-type', 'x-gateway-model', 'x-request-cost-usd', 'x-request-id', ...RATE_LIMIT_NAMES].sort());
    expect(value(headers, 'content-length')).toBe(String(Buffer.byteLength('{"ok":true}')));
    expect(value(headers, 'content-type')).toBe('application/json');
    expect(value(headers, 'x-request-id')).toMatch(/^req_/);
    expect(value(headers, 'x-request-cost-usd')).toBe('0.000123');
    expect(value(headers, 'x-ratelimit-remaining')).toBe('59');
  });

  it('a streamed answer: every header once, chunked, uncached and unbuffered by proxies', async () => {
    const port = await serveApi();
    const { status, headers } = await rawHead(port, '/stream');
    expect(status).toBe(200);
    expect(names(headers)).toEqual([...NODE_HEADERS, 'cache-control', 'content-type', 'transfer-encoding', 'x-accel-buffering', 'x-gateway-model', 'x-request-id', ...RATE_LIMIT_NAMES].sort());
    expect(value(headers, 'transfer-encoding')).toBe('chunked');
    expect(value(headers, 'cache-control')).toBe('no-cache');
    expect(value(headers, 'x-accel-buffering')).toBe('no');
    expect(value(headers, 'content-type')).toBe('text/event-stream; charset=utf-8');
  });

  it('an error answer: every header once, Retry-After among them', async () => {
    const port = await serveApi();
    const { status, headers } = await rawHead(port, '/error');
    expect(status).toBe(429);
    expect(names(headers)).toEqual([...NODE_HEADERS, 'content-length', 'content-type', 'retry-after', 'x-gateway-model', 'x-request-id', ...RATE_LIMIT_NAMES].sort());
    expect(value(headers, 'retry-after')).toBe('2');
  });

  it('headers set before the head stay, beside the answer\'s, each once', async () => {
    const port = await serveApi();
    const { headers } = await rawHead(port, '/browser');
    expect(names(headers)).toEqual([...NODE_HEADERS, 'access-control-allow-origin', 'content-length', 'content-type', 'vary', 'x-gateway-model', 'x-request-id', ...RATE_LIMIT_NAMES].sort());
    expect(value(headers, 'access-control-allow-origin')).toBe('https://app.example');
  });

  it('a header value with a line break is refused, and the answer is a clean 500 with no header of the refused head', async () => {
    const port = await serveApi();
    for (const path of ['/broken-value', '/broken-stream']) {
      const { status, headers, rest } = await rawHead(port, path);
      expect(status).toBe(500);
      expect(names(headers)).toEqual([...NODE_HEADERS, 'content-length', 'content-type', 'x-request-id'].sort());
      expect(headers.some(([name]) => name === 'set-cookie')).toBe(false);
      expect(rest).toContain('internal_error');
    }
  });

  it('node:http refuses the value written in one list with the error setHeader gave', async () => {
    const { ServerResponse, IncomingMessage } = await import('node:http');
    const { Socket } = await import('node:net');
    const fresh = () => new ServerResponse(new IncomingMessage(new Socket()));
    const thrown = (write: () => void): unknown => {
      try {
        write();
      } catch (error) {
        return error;
      }
      return null;
    };
    const bySetHeader = thrown(() => fresh().setHeader('x-gateway-warnings', 'a\r\nb'));
    const byList = thrown(() => fresh().writeHead(200, ['x-gateway-warnings', 'a\r\nb']));
    expect((byList as { code?: string }).code).toBe('ERR_INVALID_CHAR');
    expect((byList as { code?: string }).code).toBe((bySetHeader as { code?: string }).code);
  });
});
