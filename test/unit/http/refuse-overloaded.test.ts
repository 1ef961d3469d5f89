/**
 * A request refused by admission control: 503 `overloaded` with Retry-After, and its connection closes after the
 * answer (the client's next request waits for a new connection instead of costing the process another parse and
 * answer), also when the body was still on its way, without a reset that would lose the answer.
 */
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createClientIpResolver } from '../../../src/auth/client-ip.js';
import { AdmissionControl } from '../../../src/http/admission-control.js';
import { createListener } from '../../../src/http/create-listener.js';
import { sendJson } from '../../../src/http/respond.js';
import { Router } from '../../../src/http/router.js';
import { createLogger } from '../../../src/shared/logger.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A server admitting one request at once; the route holds it until `release` is called. */
async function serveOneAtOnce(): Promise<{ port: number; release: () => void }> {
  let release = (): void => {};
  const router = new Router().add('POST', '/v1/chat/completions', (context) => new Promise<void>((resolve) => {
    release = () => {
      sendJson(context, 200, { ok: true });
      resolve();
    };
  }));
  const admission = new AdmissionControl({ maxInFlight: 1, queueTargetMs: 0, intervalMs: 250, minShare: 0.1 });
  const server = createServer(createListener({ router, logger: createLogger('error', () => {}), clientIp: createClientIpResolver({ mode: 'none' }), admission }));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, release: () => release() };
}

/** Writes `parts` on a new keep-alive connection (the later ones `gapMs` apart) and reads until the server closes it. */
function exchange(port: number, parts: string[], gapMs = 0): Promise<{ text: string; error: string | null }> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let error: string | null = null;
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('error', (thrown: NodeJS.ErrnoException) => (error = thrown.code ?? thrown.message));
    socket.on('close', () => resolve({ text, error }));
    void (async () => {
      for (const part of parts) {
        if (socket.destroyed) return;
        socket.write(part);
        if (gapMs > 0) await new Promise((done) => setTimeout(done, gapMs));
      }
    })();
  });
}

const BODY = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hello' }] });
const head = (length: number): string => `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;

describe('a refusal for overload', () => {
  it('answers 503 overloaded with Retry-After and closes the keep-alive connection', async () => {
    const { port, release } = await serveOneAtOnce();
    const held = exchange(port, [head(BODY.length) + BODY]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const refused = await exchange(port, [head(BODY.length) + BODY]);
    expect(refused.error).toBeNull();
    expect(refused.text).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused.text.toLowerCase()).toContain('retry-after: 1');
    expect(refused.text.toLowerCase()).toContain('connection: close');
    expect(refused.text).toContain('"code":"overloaded"');
    release();
    // The admitted request's connection stays open (keep-alive): it ends only when the test closes the server.
    servers[0]!.closeAllConnections();
    expect((await held).text).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('reads and drops a body still arriving before the connection closes, so the answer is not lost to a reset', async () => {
    const { port, release } = await serveOneAtOnce();
    void exchange(port, [head(BODY.length) + BODY]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const large = 'x'.repeat(200_000);
    const refused = await exchange(port, [head(large.length), large.slice(0, 100_000), large.slice(100_000)], 30);
    expect(refused.text).toMatch(/^HTTP\/1\.1 503 /);
    expect(refused.text).toContain('"code":"overloaded"');
    expect(refused.error).toBeNull();
    release();
  });
});
