/** A real SMTP server (the smtp-server package) on 127.0.0.1 that keeps every message it accepts, for mail tests. */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface CapturedMail {
  /** Envelope sender and recipients. */
  from: string;
  to: string[];
  /** Decoded Subject header. */
  subject: string;
  /** Decoded text body. */
  text: string;
  raw: string;
}

export interface SmtpCaptureOptions {
  /** Port to listen on (0: any free one). */
  port?: number;
  /** Demand AUTH PLAIN/LOGIN with these credentials (over plain TCP, as a local relay would). */
  credentials?: { user: string; pass: string };
}

/** RFC 2047 encoded words (=?utf-8?Q?…?= / =?utf-8?B?…?=), as nodemailer writes non-ASCII headers. */
function decodeHeader(value: string): string {
  return value.replace(/\r?\n[ \t]/g, ' ').replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=\s*(?==\?)?/g, (_match, _charset: string, encoding: string, text: string) => {
    if (encoding.toUpperCase() === 'B') return Buffer.from(text, 'base64').toString('utf8');
    const bytes = text.replace(/_/g, ' ').replace(/=([0-9A-Fa-f]{2})/g, (_hex, code: string) => String.fromCharCode(Number.parseInt(code, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  });
}

function decodeBody(headers: string, body: string): string {
  const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(headers)?.[1]?.toLowerCase();
  if (encoding === 'base64') return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  if (encoding === 'quoted-printable') {
    const bytes = body.replace(/=\r?\n/g, '').replace(/=([0-9A-Fa-f]{2})/g, (_hex, code: string) => String.fromCharCode(Number.parseInt(code, 16)));
    return Buffer.from(bytes, 'latin1').toString('utf8');
  }
  return body;
}

export function parseMail(raw: string, from: string, to: string[]): CapturedMail {
  const split = raw.indexOf('\r\n\r\n');
  const headers = split === -1 ? raw : raw.slice(0, split);
  const body = split === -1 ? '' : raw.slice(split + 4);
  const subjectLine = /^subject:(.*(?:\r?\n[ \t].*)*)/im.exec(headers)?.[1] ?? '';
  return { from, to, subject: decodeHeader(subjectLine.trim()), text: decodeBody(headers, body), raw };
}

export class SmtpCapture {
  readonly messages: CapturedMail[] = [];
  #server: SMTPServer | null = null;
  #port = 0;

  get port(): number {
    return this.#port;
  }

  /** The SMTP_URL a gateway should use to reach this server (credentials included when demanded). */
  url(credentials?: { user: string; pass: string }): string {
    const auth = credentials === undefined ? '' : `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.pass)}@`;
    return `smtp://${auth}127.0.0.1:${this.#port}`;
  }

  async start(options: SmtpCaptureOptions = {}): Promise<void> {
    const credentials = options.credentials;
    const server = new SMTPServer({
      disabledCommands: credentials === undefined ? ['STARTTLS', 'AUTH'] : ['STARTTLS'],
      authOptional: credentials === undefined,
      allowInsecureAuth: true,
      logger: false,
      onAuth(auth, _session, callback) {
        if (credentials !== undefined && auth.username === credentials.user && auth.password === credentials.pass) callback(null, { user: auth.username });
        else callback(new Error('Invalid username or password'));
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const from = session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address;
          this.messages.push(parseMail(Buffer.concat(chunks).toString('utf8'), from, session.envelope.rcptTo.map((recipient) => recipient.address)));
          callback();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', () => {});
    this.#server = server;
    this.#port = (server.server.address() as AddressInfo).port;
  }

  to(address: string): CapturedMail[] {
    return this.messages.filter((message) => message.to.includes(address));
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = null;
    if (server !== null) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
