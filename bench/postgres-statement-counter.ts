/**
 * Counts the statements a PostgreSQL client runs, on the wire: a TCP relay in front of the server that reads the
 * frontend protocol of every connection and counts its Query ('Q', simple protocol: one or more statements sent
 * as one) and Execute ('E', extended protocol: one prepared statement run) messages. The startup packet (and an
 * SSLRequest, answered by the server) carry no type byte and are skipped; under TLS nothing after them can be read,
 * so the bench connects without it. Bytes pass through unchanged in both directions.
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface StatementCounter {
  /** the database URL with the relay's host and port in place of the server's */
  url: string;
  /** statements counted so far, over every connection */
  statements(): number;
  close(): Promise<void>;
}

/** Reads one connection's frontend stream and calls `count` once per Query or Execute message. */
export class FrontendMessageReader {
  #buffered: Buffer = Buffer.alloc(0);
  #started = false;

  constructor(private readonly count: () => void) {}

  push(chunk: Buffer): void {
    this.#buffered = this.#buffered.length === 0 ? chunk : Buffer.concat([this.#buffered, chunk]);
    for (;;) {
      if (!this.#started) {
        if (this.#buffered.length < 8) return;
        const length = this.#buffered.readInt32BE(0);
        if (this.#buffered.length < length) return;
        const code = this.#buffered.readInt32BE(4);
        // SSLRequest and GSSENCRequest precede the startup packet; the startup packet itself starts the typed messages.
        if (code !== 80877103 && code !== 80877104) this.#started = true;
        this.#buffered = this.#buffered.subarray(length);
        continue;
      }
      if (this.#buffered.length < 5) return;
      const length = this.#buffered.readInt32BE(1);
      if (this.#buffered.length < 1 + length) return;
      const type = this.#buffered[0];
      if (type === 0x51 || type === 0x45) this.count();
      this.#buffered = this.#buffered.subarray(1 + length);
    }
  }
}

export async function startStatementCounter(databaseUrl: string): Promise<StatementCounter> {
  const target = new URL(databaseUrl);
  const host = target.hostname || '127.0.0.1';
  const port = Number(target.port || '5432');
  let statements = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect({ host, port });
    sockets.add(client).add(upstream);
    const reader = new FrontendMessageReader(() => {
      statements += 1;
    });
    client.on('data', (chunk: Buffer) => {
      reader.push(chunk);
      if (!upstream.write(chunk)) client.pause();
    });
    upstream.on('drain', () => client.resume());
    upstream.on('data', (chunk: Buffer) => {
      if (!client.write(chunk)) upstream.pause();
    });
    client.on('drain', () => upstream.resume());
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise<void>((done) => server.listen({ port: 0, host: '127.0.0.1' }, done));
  const relayed = new URL(databaseUrl);
  relayed.hostname = '127.0.0.1';
  relayed.port = String((server.address() as AddressInfo).port);
  return {
    url: relayed.toString(),
    statements: () => statements,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
