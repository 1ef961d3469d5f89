/**
 * A webhook receiver over real HTTP on 127.0.0.1 that verifies every request with the official `standardwebhooks`
 * package (the Standard Webhooks reference verifier) and processes each event id at most once, as a receiver should.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface ReceivedRequest {
  id: string;
  timestamp: string;
  signature: string;
  body: string;
  /** Which of the known secrets verified it (by index); empty when none did. */
  verifiedBy: number[];
  /** What the receiver answered. */
  status: number;
}

export class WebhookReceiver {
  readonly requests: ReceivedRequest[] = [];
  /** Event ids processed (answered 2xx after verifying): each counted once however often it arrives. */
  readonly processed = new Map<string, unknown>();
  /** Secrets to verify with (set after the endpoint is created). */
  secrets: string[] = [];
  /** Status to answer per request: consumed in order, then 200. */
  answers: number[] = [];
  #server: Server | null = null;

  async start(): Promise<string> {
    this.#server = createServer((request, response) => {
      void this.#handle(request).then((status) => {
        response.statusCode = status;
        response.setHeader('content-type', 'text/plain');
        response.end(status === 200 ? 'ok' : `refused with ${status} \u0001 and some text`);
      });
    });
    await new Promise<void>((resolve) => this.#server?.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/hooks`;
  }

  async #handle(request: IncomingMessage): Promise<number> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const headers = {
      'webhook-id': String(request.headers['webhook-id'] ?? ''),
      'webhook-timestamp': String(request.headers['webhook-timestamp'] ?? ''),
      'webhook-signature': String(request.headers['webhook-signature'] ?? ''),
    };
    const verifiedBy: number[] = [];
    let payload: unknown = null;
    this.secrets.forEach((secret, index) => {
      try {
        payload = new Webhook(secret).verify(body, headers);
        verifiedBy.push(index);
      } catch {
        // Not signed with this secret.
      }
    });
    const wanted = this.answers.shift() ?? 200;
    const status = verifiedBy.length === 0 ? 401 : wanted;
    this.requests.push({ id: headers['webhook-id'], timestamp: headers['webhook-timestamp'], signature: headers['webhook-signature'], body, verifiedBy, status });
    if (status === 200 && !this.processed.has(headers['webhook-id'])) this.processed.set(headers['webhook-id'], payload);
    return status;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.#server?.close(() => resolve()));
  }
}
