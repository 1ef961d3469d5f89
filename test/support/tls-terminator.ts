/**
 * A TLS front for a plain-HTTP listener on 127.0.0.1, with a self-signed certificate for 127.0.0.1 made by openssl:
 * the `openai` SDK's realtime clients connect with `wss:` only.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createServer } from 'node:tls';

export interface TlsTerminator {
  /** `https://127.0.0.1:<port>` */
  url: string;
  /** The certificate to trust (PEM). */
  ca: string;
  close(): Promise<void>;
}

export async function startTlsTerminator(target: string): Promise<TlsTerminator> {
  const directory = mkdtempSync(path.join(tmpdir(), 'unigate-tls-'));
  const keyFile = path.join(directory, 'key.pem');
  const certFile = path.join(directory, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
  const key = readFileSync(keyFile);
  const cert = readFileSync(certFile, 'utf8');
  rmSync(directory, { recursive: true, force: true });
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const server = createServer({ key, cert }, (secure) => {
    const plain = connect(Number(port), hostname);
    sockets.add(secure);
    sockets.add(plain);
    secure.pipe(plain).pipe(secure);
    const end = (): void => {
      secure.destroy();
      plain.destroy();
      sockets.delete(secure);
      sockets.delete(plain);
    };
    secure.on('error', end).on('close', end);
    plain.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ca: cert,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
