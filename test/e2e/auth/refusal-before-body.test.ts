/**
 * A request refused before its body is read (a wrong key, a lockout, a body over the limit) is answered only once
 * the rest of the body has been read and dropped, within a time and byte budget: a client still uploading reads the
 * answer instead of a reset (EPIPE / ECONNRESET), also when it asked the connection to close after the answer.
 */
import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRAIN_BEFORE_ANSWER_BYTES } from '../../../src/multipart/drain-request.js';
import { seedAccount, startTestGateway, type TestGateway } from '../../support/gateway-harness.js';

const MIB = 1024 * 1024;
const CHUNK = 64 * 1024;

interface Upload {
  path: string;
  headers: Record<string, string>;
  /** Bytes sent, in 64 KiB chunks a few milliseconds apart: the refusal arrives while the client is still sending. */
  size: number;
  /** Sends `content-length` (the default) or chunked transfer encoding. */
  chunked?: boolean;
  /** Asks the server to close the connection after its answer (the default), or to keep it. */
  close?: boolean;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 1 });

/** The answer as read, and the client's error if it had one at any point (EPIPE, ECONNRESET while sending). */
interface Outcome {
  status?: number;
  connection?: string | undefined;
  body?: { error?: { code?: string } };
  error?: string;
}

/** Sends the whole upload, whatever the server answers meanwhile, and settles once the exchange is over. */
function upload(gateway: TestGateway, options: Upload): Promise<Outcome> {
  const url = new URL(gateway.url);
  return new Promise((resolve) => {
    const outcome: Outcome = {};
    const client = request({
      host: url.hostname,
      port: url.port,
      method: 'POST',
      path: options.path,
      agent: options.close === false ? keepAlive : false,
      headers: {
        ...options.headers,
        'content-type': 'application/json',
        ...(options.chunked === true ? {} : { 'content-length': String(options.size) }),
      },
    });
    let answered = false;
    let sentAll = false;
    const settle = (): void => {
      if ((answered && sentAll) || outcome.error !== undefined) resolve(outcome);
    };
    client.on('error', (error: NodeJS.ErrnoException) => {
      outcome.error ??= error.code ?? error.message;
      settle();
    });
    client.on('close', () => {
      if (!sentAll) outcome.error ??= 'closed while the upload was being sent';
      settle();
    });
    client.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        Object.assign(outcome, { status: response.statusCode, connection: response.headers.connection, body: JSON.parse(text) as Outcome['body'] });
        answered = true;
        settle();
      });
    });
    let sent = 0;
    const chunk = Buffer.alloc(CHUNK, 0x61);
    const next = (): void => {
      if (outcome.error !== undefined || client.destroyed) return;
      sent += CHUNK;
      if (sent < options.size) {
        client.write(chunk);
        setTimeout(next, 5);
        return;
      }
      sentAll = true;
      // A reset after the last write surfaces on the socket a moment later.
      client.end(chunk, () => setTimeout(settle, 50));
    };
    next();
  });
}

/** The answer read in full, and no error on the client's side at any point. */
function answered(status: number, code: string, connection = 'close'): Outcome {
  return { status, connection, body: { error: expect.objectContaining({ code }) as { code: string } } };
}

describe('answers refused before the body was read', () => {
  let gateway: TestGateway;
  let key = '';

  beforeAll(async () => {
    gateway = await startTestGateway({ env: { AUTH_FAILURE_LIMIT: '2', AUTH_FAILURE_WINDOW_SECONDS: '60', MAX_BODY_BYTES: String(512 * 1024) } });
    key = (await seedAccount(gateway, { balanceUsd: 1 })).key;
  });

  afterAll(async () => {
    keepAlive.destroy();
    await gateway?.close();
  });

  it('a 1 MB upload over the body limit reads its 413, declared or chunked, and a kept-alive connection stays usable', async () => {
    const headers = { authorization: `Bearer ${key}` };
    for (const chunked of [false, true]) {
      expect(await upload(gateway, { path: '/v1/chat/completions', headers, size: MIB, chunked })).toEqual(answered(413, 'payload_too_large'));
      expect(await upload(gateway, { path: '/v1/chat/completions', headers, size: MIB, chunked, close: false })).toEqual(answered(413, 'payload_too_large', 'keep-alive'));
    }
  });

  it('a 1 MB upload with a wrong key reads its 401, then its 429 once the address is locked out', async () => {
    const wrong = (index: number): Record<string, string> => ({ authorization: `Bearer sk-${'w'.repeat(39)}${index}` });
    for (const index of [0, 1]) {
      expect(await upload(gateway, { path: '/v1/chat/completions', headers: wrong(index), size: MIB })).toEqual(answered(401, 'invalid_api_key'));
    }
    for (const chunked of [false, true]) {
      expect(await upload(gateway, { path: '/v1/chat/completions', headers: wrong(2), size: MIB, chunked })).toEqual(answered(429, 'too_many_failed_attempts'));
    }
  });

  it('does not read a body declared larger than the budget: the answer comes at once and closes the connection', async () => {
    const started = performance.now();
    const url = new URL(gateway.url);
    const answer = await new Promise<{ status: number; connection: string | undefined }>((resolve, reject) => {
      const client = request({ host: url.hostname, port: url.port, method: 'POST', path: '/v1/chat/completions', agent: false, headers: { authorization: `Bearer ${key}`, 'content-length': String(DRAIN_BEFORE_ANSWER_BYTES + 1) } });
      client.on('response', (response) => {
        response.resume();
        resolve({ status: response.statusCode ?? 0, connection: response.headers.connection });
      });
      client.on('error', reject);
      client.flushHeaders();
    });
    expect(answer).toEqual({ status: 413, connection: 'close' });
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
