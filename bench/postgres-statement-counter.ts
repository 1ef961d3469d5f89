/**
 * Counts the statements a PostgreSQL client runs, on the wire: a TCP relay in front of the server that reads the
 * frontend protocol of every connection and counts its Query ('Q', simple protocol: one or more statements sent
 * as one) and Execute ('E', extended protocol: one prepared statement run) messages. The startup packet (and an
 * SSLRequest, answered by the server) carry no type byte and are skipped; under TLS nothing after them can be read,
 * so the bench connects without it. Bytes pass through unchanged in both directions.
 *
 * It also tallies the statements' texts (a Query's text; an Execute's from the Parse before it on that connection),
 * so a run can say which statements its requests cause (BENCH_STATEMENT_TEXTS=1 prints them).
 */
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface StatementCounter {
  /** the database URL with the relay's host and port in place of the server's */
  url: string;
  /** statements counted so far, over every connection */
  statements(): number;
  /** how often each statement text was run so far, over every connection */
  texts(): ReadonlyMap<string, number>;
  close(): Promise<void>;
}

/** Reads one connection's frontend stream and calls `count` once per Query or Execute message. */
export class FrontendMessageReader {
  #buffered: Buffer = Buffer.alloc(0);
  #started = false;

  /** The text of the last Parse (an unnamed statement is parsed before each Execute). */
  #parsed = '';

  constructor(private readonly count: (text: string) => void) {}

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
      if (type === 0x50) this.#parsed = parseText(this.#buffered.subarray(5, 1 + length));
      if (type === 0x51) this.count(cString(this.#buffered.subarray(5, 1 + length)));
      if (type === 0x45) this.count(this.#parsed);
      this.#buffered = this.#buffered.subarray(1 + length);
    }
  }
}

function cString(bytes: Buffer): string {
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end === -1 ? bytes.length : end).toString('utf8');
}

/** A Parse message: the statement's name, then its text, both NUL-terminated. */
function parseText(body: Buffer): string {
  const nameEnd = body.indexOf(0);
  return cString(body.subarray(nameEnd + 1));
}

export async function startStatementCounter(databaseUrl: string): Promise<StatementCounter> {
  const target = new URL(databaseUrl);
  const host = target.hostname || '127.0.0.1';
  const port = Number(target.port || '5432');
  let statements = 0;
  const texts = new Map<string, number>();
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect({ host, port });
    sockets.add(client).add(upstream);
    const reader = new FrontendMessageReader((text) => {
      statements += 1;
      const shown = text.replace(/\s+/g, ' ').slice(0, 160);
      texts.set(shown, (texts.get(shown) ?? 0) + 1);
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
    texts: () => texts,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
