/**
 * Malformed HTTP, slow clients and connection floods against a real listener, over raw TCP: where the connection
 * still allows an answer it is the spec's error object with the right status, then the connection closes; slow
 * or silent clients are cut off at the configured deadlines; one address cannot hold more than its connections.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAccount, startTestGateway, type SeededAccount, type TestGateway } from '../../support/gateway-harness.js';
import { familyErrorProblem } from '../../support/family-error.js';

interface RawAnswer {
  text: string;
  status: number | null;
  body: string;
  /** ms from the first byte sent until the server closed the connection; null if still open at the timeout. */
  closedAfterMs: number | null;
}

/** Opens a connection, lets `drive` write to it, and collects everything until the server closes it (bounded). */
function exchange(port: number, drive: (socket: Socket) => void | Promise<void>, timeoutMs = 8000): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const started = performance.now();
    let settled = false;
    const finish = (closed: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      const bodyAt = text.indexOf('\r\n\r\n');
      resolve({ text, status: status === undefined ? null : Number(status), body: bodyAt < 0 ? '' : text.slice(bodyAt + 4), closedAfterMs: closed ? performance.now() - started : null });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.on('connect', () => {
      Promise.resolve(drive(socket)).catch(() => finish(true));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

function expectErrorAnswer(answer: RawAnswer, status: number, code?: string): void {
  expect(answer.status, answer.text.slice(0, 400)).toBe(status);
  expect(familyErrorProblem('openai', answer.body), answer.text.slice(0, 400)).toBeNull();
  if (code !== undefined) expect(JSON.parse(answer.body)).toMatchObject({ error: { code } });
  expect(answer.text.toLowerCase()).toContain('connection: close');
  expect(answer.closedAfterMs, 'the server closed the connection').not.toBeNull();
}

describe('hostile connections', () => {
  let gateway: TestGateway;
  let account: SeededAccount;
  let port = 0;

  beforeAll(async () => {
    gateway = await startTestGateway({
      env: {
        HEADERS_TIMEOUT_MS: '1500',
        REQUEST_TIMEOUT_MS: '2500',
        KEEP_ALIVE_TIMEOUT_MS: '1500',
        MAX_CONNECTIONS_PER_IP: '40',
        MAX_BODY_BYTES: String(1024 * 1024),
      },
    });
    account = await seedAccount(gateway, { balanceUsd: 1 });
    port = Number(new URL(gateway.url).port);
  });

  afterAll(async () => {
    await gateway?.close();
  });

  describe('malformed HTTP gets the error object, then a close', () => {
    const cases: Array<[string, string, number, string]> = [
      ['a bare LF inside a header value', 'GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Probe: a\nb\r\n\r\n', 400, 'bad_request'],
      ['a NUL in a header value', 'GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Probe: a\u0000b\r\n\r\n', 400, 'bad_request'],
      ['two different Content-Length headers', 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x', 400, 'bad_request'],
      ['Content-Length with chunked', 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400, 'bad_request'],
      ['a garbage request line', 'HELLO THERE\r\n\r\n', 400, 'bad_request'],
      ['a binary request line', '\u0016\u0003\u0001\u0002\u0000\u0001\u0000\u0001\u00fc\u0003\u0003\r\n\r\n', 400, 'bad_request'],
      ['20 KB of headers', `GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20 * 1024)}\r\n\r\n`, 431, 'headers_too_large'],
      ['more than 100 headers', `GET /v1/models HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 150 }, (_unused, index) => `X-H${index}: v`).join('\r\n')}\r\n\r\n`, 431, 'headers_too_large'],
    ];
    it.each(cases)('%s', async (_name, raw, status, code) => {
      const answer = await exchange(port, (socket) => {
        socket.write(Buffer.from(raw, 'latin1'));
      });
      expectErrorAnswer(answer, status, code);
    });
  });

  it('answers a 50 MB chunked body 413 with the error object (the limit here is 1 MB)', async () => {
    const answer = await exchange(port, async (socket) => {
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${account.key}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`);
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      for (let index = 0; index < 50 && !socket.destroyed; index += 1) {
        // Each part of the chunk is written whatever the previous write returned: skipping one would break the framing.
        socket.write(`${chunk.length.toString(16)}\r\n`);
        socket.write(chunk);
        if (!socket.write('\r\n')) await new Promise((resolve) => socket.once('drain', resolve));
      }
      if (!socket.destroyed) socket.write('0\r\n\r\n');
    }, 15_000);
    expect(answer.status, answer.text.slice(0, 300)).toBe(413);
    expect(familyErrorProblem('openai', answer.body)).toBeNull();
    expect(JSON.parse(answer.body)).toMatchObject({ error: { code: 'payload_too_large' } });
  });

  it('closes a connection whose headers never finish at the header deadline, with 408', async () => {
    const answer = await exchange(port, (socket) => {
      socket.write('GET /v1/models HTTP/1.1\r\nHost: x\r\n');
    });
    expectErrorAnswer(answer, 408, 'request_timeout');
    expect(answer.closedAfterMs).toBeLessThan(4000);
  });

  it('closes a request whose body never comes at the request deadline, with 408', async () => {
    const answer = await exchange(port, (socket) => {
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${account.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`);
    });
    expect(answer.closedAfterMs, answer.text).not.toBeNull();
    expect(answer.closedAfterMs).toBeLessThan(5000);
    expectErrorAnswer(answer, 408, 'request_timeout');
  });

  it('closes a request trickling its body one byte at a time at the request deadline', async () => {
    const answer = await exchange(port, async (socket) => {
      socket.write(`POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${account.key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`);
      for (let index = 0; index < 40 && !socket.destroyed; index += 1) {
        socket.write('{');
        await sleep(200);
      }
    });
    expect(answer.closedAfterMs, answer.text).not.toBeNull();
    expect(answer.closedAfterMs).toBeLessThan(5000);
    expectErrorAnswer(answer, 408, 'request_timeout');
  });

  it('never serves a request whose body completes just after it was answered 408', async () => {
    const balance = async (): Promise<bigint> => (await gateway.gateway.services.storage.accounts.getById(account.accountId))?.balanceNano ?? -1n;
    const before = await balance();
    const answer = await exchange(port, async (socket) => {
      socket.write(`POST /admin/accounts/${account.accountId}/credits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gateway.adminToken}\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{"amount_usd"`);
      await new Promise((resolve) => socket.once('data', resolve));
      socket.write(':50}');
    });
    expectErrorAnswer(answer, 408, 'request_timeout');
    await sleep(300);
    expect(await balance()).toBe(before);
  });

  it('closes an idle keep-alive connection after the keep-alive deadline', async () => {
    const answer = await exchange(port, (socket) => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expect(answer.status).toBe(200);
    expect(answer.closedAfterMs).not.toBeNull();
    expect(answer.closedAfterMs).toBeLessThan(4000);
  });

  it('refuses connections past the per-IP cap with 429 and lets one in again once others close', async () => {
    const held: Socket[] = [];
    try {
      for (let index = 0; index < 40; index += 1) {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        await new Promise((resolve) => socket.once('connect', resolve));
        held.push(socket);
      }
      await sleep(100);
      const balance = async (): Promise<bigint> => (await gateway.gateway.services.storage.accounts.getById(account.accountId))?.balanceNano ?? -1n;
      const before = await balance();
      // An admin credit on a refused connection: answered 429 and never served.
      const refused = await exchange(port, (socket) => {
        socket.write(`POST /admin/accounts/${account.accountId}/credits HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${gateway.adminToken}\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{"amount_usd":50}`);
      });
      expectErrorAnswer(refused, 429, 'rate_limit_exceeded');
      expect(refused.text.toLowerCase()).toContain('retry-after: 1');
      expect(refused.text.match(/HTTP\/1\.1 /g)).toHaveLength(1);
      await sleep(300);
      expect(await balance()).toBe(before);
    } finally {
      for (const socket of held) socket.destroy();
    }
    await sleep(200);
    const admitted = await exchange(port, (socket) => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    });
    expect(admitted.status).toBe(200);
  });
});
