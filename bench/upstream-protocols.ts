/**
 * HTTP/1.1 or HTTP/2 to a TLS upstream: the gateway's upstream client (undici, configured as the gateway's transport
 * configures it) sends the same chat requests to one server that speaks both, first over HTTP/1.1 keep-alive
 * connections, then over HTTP/2 (ALPN, requests multiplexed on a session). Reported: requests per second and the
 * client's CPU time per request — what the protocol would cost the gateway per upstream call.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { Agent, Pool } from 'undici';

export interface UpstreamProtocolResult {
  protocol: 'http/1.1' | 'h2';
  requestsPerSec: number;
  clientCpuMicrosPerRequest: number;
}

/** A self-signed certificate for 127.0.0.1 (openssl from the system); null when openssl is missing. */
export function selfSignedCertificate(dir: string): { key: string; cert: string } | null {
  const key = join(dir, 'upstream-key.pem');
  const cert = join(dir, 'upstream-cert.pem');
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore', timeout: 30_000 });
    return { key, cert };
  } catch {
    return null;
  }
}

export async function measureUpstreamProtocol(
  protocol: UpstreamProtocolResult['protocol'],
  origin: string,
  certPath: string,
  options: { seconds: number; concurrency: number },
): Promise<UpstreamProtocolResult> {
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    // HTTP/1.1 as the gateway sends it (one request per connection at a time); HTTP/2 by ALPN with no per-connection
    // cap, so a session carries every request in flight.
    ...(protocol === 'h2' ? { allowH2: true } : { pipelining: 1 }),
    connect: { ca: readFileSync(certPath), timeout: 10_000 },
    factory: (poolOrigin, poolOptions) => new Pool(poolOrigin, { ...poolOptions, connections: 10_000 }),
  });
  const body = JSON.stringify({ model: 'bench-model', messages: [{ role: 'user', content: 'A question of a realistic length for a chat request.' }] });
  const send = async (): Promise<void> => {
    // POST is not idempotent to undici, which then never shares an HTTP/2 session between two requests in flight.
    const response = await agent.request({ origin, path: '/v1/chat/completions', method: 'POST', headers: { 'content-type': 'application/json' }, body, idempotent: protocol === 'h2' });
    await response.body.arrayBuffer();
  };
  await Promise.all(Array.from({ length: options.concurrency }, () => send()));
  let done = 0;
  const cpuBefore = process.cpuUsage();
  const startedAt = performance.now();
  const until = startedAt + options.seconds * 1000;
  await Promise.all(Array.from({ length: options.concurrency }, async () => {
    while (performance.now() < until) {
      await send();
      done++;
    }
  }));
  const cpu = process.cpuUsage(cpuBefore);
  const elapsedSeconds = (performance.now() - startedAt) / 1000;
  await agent.close();
  return { protocol, requestsPerSec: done / elapsedSeconds, clientCpuMicrosPerRequest: (cpu.user + cpu.system) / Math.max(1, done) };
}
